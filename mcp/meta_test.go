package mcp

import (
	"encoding/json"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

func TestMetaNumbersRoundTrip(t *testing.T) {
	in := `{"a":12345678901234567890,"b":1.10,"c":{"d":[1e400,-0.0,3]},"e":"s"}`
	var m Meta
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	if m["a"] != json.Number("12345678901234567890") {
		t.Errorf("a = %#v, want json.Number", m["a"])
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
}

func TestMetaUnmarshal(t *testing.T) {
	m := Meta{"old": 1}
	if err := json.Unmarshal([]byte(` null `), &m); err != nil || m != nil {
		t.Errorf("null: %v, %v", m, err)
	}
	for _, bad := range []string{`[]`, `"x"`, `1`, `{"a":}`} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// Inside a params object, _meta keeps numbers exact too.
	var p CallToolRequestParams
	if err := json.Unmarshal([]byte(`{"name":"t","_meta":{"n":9007199254740993}}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Meta["n"] != json.Number("9007199254740993") {
		t.Errorf("n = %#v", p.Meta["n"])
	}
}

func TestMetaProgressToken(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want ProgressToken
		ok   bool
	}{
		{"string", "abc", jsonrpc.StringID("abc"), true},
		{"empty string", "", jsonrpc.StringID(""), true},
		{"json integer", json.Number("42"), jsonrpc.Int64ID(42), true},
		{"json negative", json.Number("-1"), jsonrpc.Int64ID(-1), true},
		{"json fraction", json.Number("1.5"), ProgressToken{}, false},
		{"json exponent", json.Number("1e3"), ProgressToken{}, false},
		{"json too big", json.Number("9223372036854775808"), ProgressToken{}, false},
		{"int", 7, jsonrpc.Int64ID(7), true},
		{"int32", int32(7), jsonrpc.Int64ID(7), true},
		{"int64", int64(1) << 40, jsonrpc.Int64ID(1 << 40), true},
		{"float integral", 8.0, jsonrpc.Int64ID(8), true},
		{"float fraction", 8.5, ProgressToken{}, false},
		{"id", jsonrpc.StringID("x"), jsonrpc.StringID("x"), true},
		{"zero id", jsonrpc.ID{}, ProgressToken{}, false},
		{"id pointer", &[]jsonrpc.ID{jsonrpc.Int64ID(3)}[0], jsonrpc.Int64ID(3), true},
		{"bool", true, ProgressToken{}, false},
		{"null", nil, ProgressToken{}, false},
	}
	for _, tt := range tests {
		m := Meta{MetaKeyProgressToken: tt.v}
		got, ok := m.ProgressToken()
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: ProgressToken() = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := Meta(nil).ProgressToken(); ok {
		t.Error("nil Meta has a progress token")
	}
}

func TestMetaSetProgressTokenRoundTrip(t *testing.T) {
	for _, tok := range []ProgressToken{jsonrpc.Int64ID(5), jsonrpc.StringID("5")} {
		var p CallToolRequestParams
		p.Name = "t"
		p.Meta.SetProgressToken(tok)
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q CallToolRequestParams
		if err := json.Unmarshal(data, &q); err != nil {
			t.Fatal(err)
		}
		if got, ok := q.Meta.ProgressToken(); !ok || got != tok {
			t.Errorf("%s: token %v (%v) came back as %v, %v", data, tok, tok.IsString(), got, ok)
		}
		q.Meta.SetProgressToken(ProgressToken{})
		if _, ok := q.Meta[MetaKeyProgressToken]; ok {
			t.Error("zero token did not remove the entry")
		}
	}
	var nilMeta Meta
	nilMeta.SetProgressToken(ProgressToken{}) // no panic on a nil map
	if nilMeta != nil {
		t.Error("removing from a nil Meta allocated it")
	}
}

func TestMetaRelatedTask(t *testing.T) {
	var m Meta
	if _, ok := m.RelatedTaskID(); ok {
		t.Error("nil Meta has a related task")
	}
	m.SetRelatedTask("task-1")
	if id, ok := m.RelatedTaskID(); !ok || id != "task-1" {
		t.Errorf("RelatedTaskID() = %q, %v", id, ok)
	}
	data, err := json.Marshal(Result{Meta: m})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"task-1"}}}`; string(data) != want {
		t.Errorf("encoded %s, want %s", data, want)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if id, ok := r.Meta.RelatedTaskID(); !ok || id != "task-1" {
		t.Errorf("after decoding: %q, %v", id, ok)
	}
	for name, v := range map[string]any{
		"string":    "task-1",
		"no taskId": map[string]any{"id": "x"},
		"number id": map[string]any{"taskId": json.Number("1")},
		"empty id":  map[string]any{"taskId": ""},
		"nil ptr":   (*RelatedTaskMetadata)(nil),
	} {
		if _, ok := (Meta{MetaKeyRelatedTask: v}).RelatedTaskID(); ok {
			t.Errorf("%s: related task found", name)
		}
	}
	if id, ok := (Meta{MetaKeyRelatedTask: &RelatedTaskMetadata{TaskID: "p"}}).RelatedTaskID(); !ok || id != "p" {
		t.Errorf("pointer form: %q, %v", id, ok)
	}
	r.Meta.SetRelatedTask("")
	if len(r.Meta) != 0 {
		t.Errorf("empty task id left %v", r.Meta)
	}
}

func TestMetaModelImmediateResponse(t *testing.T) {
	var r CreateTaskResult
	in := `{"task":{"taskId":"t","status":"working","createdAt":"c","lastUpdatedAt":"c","ttl":null},"_meta":{"io.modelcontextprotocol/model-immediate-response":"working on it"}}`
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if s, ok := r.Meta.ModelImmediateResponse(); !ok || s != "working on it" {
		t.Errorf("ModelImmediateResponse() = %q, %v", s, ok)
	}
	if _, ok := (Meta{MetaKeyModelImmediateResponse: 1}).ModelImmediateResponse(); ok {
		t.Error("non-string accepted")
	}
}
