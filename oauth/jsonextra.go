package oauth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpstack/mcpstack/internal/strictjson"
)

// jsonNames returns the JSON member names of the struct v's exported fields.
func jsonNames(v any) map[string]bool {
	t := reflect.TypeOf(v)
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = true
	}
	return names
}

// unknownMembers decodes the JSON object data and returns the members that
// are not fields of the struct known, or nil if there are none.
func unknownMembers(data []byte, known any) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := strictjson.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	names := jsonNames(known)
	for k := range all {
		if names[k] {
			delete(all, k)
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}

// unmarshalWithExtra decodes the JSON object data strictly into *f, the
// field-only twin of a document type (no UnmarshalJSON of its own, so no
// recursion), and stores the members f does not name in *extra. On error
// neither is changed.
func unmarshalWithExtra[F any](data []byte, f *F, extra *map[string]json.RawMessage) error {
	var v F
	if err := strictjson.Unmarshal(data, &v); err != nil {
		return err
	}
	x, err := unknownMembers(data, v)
	if err != nil {
		return err
	}
	*f = v
	*extra = x
	return nil
}

// orDefault returns list, or def when list is empty: an absent metadata
// array stands for the default its RFC gives.
func orDefault(list []string, def ...string) []string {
	if len(list) == 0 {
		return def
	}
	return list
}

// marshalWithExtra encodes the struct v and appends the members of extra
// whose names v does not already define, in sorted order.
func marshalWithExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return data, err
	}
	names := jsonNames(v)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !names[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return appendMembers(data, keys, extra)
}

// appendMembers adds the named members of m to the JSON object obj.
func appendMembers(obj []byte, keys []string, m map[string]json.RawMessage) ([]byte, error) {
	if len(keys) == 0 {
		return obj, nil
	}
	var b bytes.Buffer
	b.Write(obj[:len(obj)-1])
	needComma := !bytes.Equal(obj, []byte("{}"))
	for _, k := range keys {
		v := m[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("oauth: member %q: invalid JSON value", k)
		}
		if needComma {
			b.WriteByte(',')
		}
		needComma = true
		name, _ := json.Marshal(k)
		b.Write(name)
		b.WriteByte(':')
		if err := json.Compact(&b, v); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
