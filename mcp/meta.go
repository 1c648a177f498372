package mcp

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Keys of the _meta map that this revision of the protocol defines.
const (
	// MetaKeyProgressToken is the request _meta key that asks the receiver
	// for notifications/progress; its value is a ProgressToken.
	MetaKeyProgressToken = "progressToken"
	// MetaKeyRelatedTask ties a request, notification or result to a task;
	// its value is a RelatedTaskMetadata ({"taskId": ...}).
	MetaKeyRelatedTask = "io.modelcontextprotocol/related-task"
	// MetaKeyModelImmediateResponse is an optional string in a
	// CreateTaskResult's _meta that a host may show the model while the
	// task runs.
	MetaKeyModelImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
)

// Meta is the _meta member that requests, notifications, results and many
// protocol objects carry: an open map of protocol and application
// metadata. Keys must satisfy ValidMetaKey.
//
// Meta decodes JSON numbers as json.Number, at any depth, so that values
// re-encode exactly as they arrived.
type Meta map[string]any

// UnmarshalJSON decodes a JSON object, keeping numbers as json.Number.
// A JSON null yields a nil Meta.
func (m *Meta) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*m = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*m = v
	return nil
}

// ProgressToken returns the progressToken entry, if there is one and it is
// a string or an integer.
func (m Meta) ProgressToken() (ProgressToken, bool) {
	return idFromMeta(m[MetaKeyProgressToken])
}

// idFromMeta converts a _meta value holding a JSON-RPC id (a progress
// token, a subscription id) to one, if it is a string or an integer.
func idFromMeta(v any) (jsonrpc.ID, bool) {
	switch t := v.(type) {
	case jsonrpc.ID:
		return t, t.IsValid()
	case *jsonrpc.ID:
		if t != nil && t.IsValid() {
			return *t, true
		}
	case string:
		return jsonrpc.StringID(t), true
	case json.Number:
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return jsonrpc.Int64ID(n), true
		}
	case int:
		return jsonrpc.Int64ID(int64(t)), true
	case int32:
		return jsonrpc.Int64ID(int64(t)), true
	case int64:
		return jsonrpc.Int64ID(t), true
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return jsonrpc.Int64ID(int64(t)), true
		}
	}
	return ProgressToken{}, false
}

// SetProgressToken sets the progressToken entry, allocating the map if
// needed. An invalid (zero) token removes the entry.
func (m *Meta) SetProgressToken(t ProgressToken) {
	if !t.IsValid() {
		delete(*m, MetaKeyProgressToken)
		return
	}
	m.set(MetaKeyProgressToken, t)
}

// RelatedTaskID returns the taskId of the io.modelcontextprotocol/related-task
// entry, if there is one.
func (m Meta) RelatedTaskID() (string, bool) {
	switch t := m[MetaKeyRelatedTask].(type) {
	case RelatedTaskMetadata:
		return t.TaskID, t.TaskID != ""
	case *RelatedTaskMetadata:
		if t != nil {
			return t.TaskID, t.TaskID != ""
		}
	case map[string]any:
		id, ok := t["taskId"].(string)
		return id, ok && id != ""
	}
	return "", false
}

// SetRelatedTask sets the io.modelcontextprotocol/related-task entry to
// {"taskId": taskID}, allocating the map if needed. An empty taskID removes
// the entry.
func (m *Meta) SetRelatedTask(taskID string) {
	if taskID == "" {
		delete(*m, MetaKeyRelatedTask)
		return
	}
	m.set(MetaKeyRelatedTask, RelatedTaskMetadata{TaskID: taskID})
}

// ModelImmediateResponse returns the
// io.modelcontextprotocol/model-immediate-response entry, if it is a string.
func (m Meta) ModelImmediateResponse() (string, bool) {
	s, ok := m[MetaKeyModelImmediateResponse].(string)
	return s, ok
}

func (m *Meta) set(key string, v any) {
	if *m == nil {
		*m = make(Meta)
	}
	(*m)[key] = v
}
