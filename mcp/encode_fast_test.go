package mcp

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// oldTextContent encodes as TextContent did before it had AppendJSON: the
// reference the fast path must reproduce byte for byte.
type oldTextContent TextContent

func (c oldTextContent) MarshalJSON() ([]byte, error) {
	type wire TextContent
	return marshalTagged("type", ContentTypeText, wire(c))
}

// refMarshalCallToolResult is json.Marshal(r) as it was before
// CallToolResult and TextContent encoded themselves.
func refMarshalCallToolResult(r *CallToolResult) ([]byte, error) {
	w := struct {
		Content           []any           `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
		IsError           *bool           `json:"isError,omitempty"`
		Meta              Meta            `json:"_meta,omitempty"`
	}{Content: []any{}, StructuredContent: r.StructuredContent, IsError: r.IsError, Meta: r.Meta}
	for _, c := range r.Content {
		if tc, ok := c.(*TextContent); ok && tc != nil {
			w.Content = append(w.Content, oldTextContent(*tc))
		} else {
			w.Content = append(w.Content, c)
		}
	}
	return json.Marshal(w)
}

func checkCallToolResultEncoding(t *testing.T, r *CallToolResult) {
	t.Helper()
	want, wantErr := refMarshalCallToolResult(r)
	got, err := r.AppendJSON([]byte("xy"))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("AppendJSON error %v, json.Marshal error %v", err, wantErr)
	}
	if err == nil && string(got) != "xy"+string(want) {
		t.Fatalf("AppendJSON:\n got %s\nwant %s", got[2:], want)
	}
	viaMarshal, err := json.Marshal(r)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("json.Marshal error %v, reference error %v", err, wantErr)
	}
	if err == nil && string(viaMarshal) != string(want) {
		t.Fatalf("json.Marshal:\n got %s\nwant %s", viaMarshal, want)
	}
}

func TestCallToolResultAppendJSON(t *testing.T) {
	yes, no := true, false
	nan, half := math.NaN(), 0.5
	for _, tc := range []struct {
		name string
		r    *CallToolResult
	}{
		{"empty", &CallToolResult{}},
		{"empty content", &CallToolResult{Content: []Content{}}},
		{"text", &CallToolResult{Content: []Content{&TextContent{Text: "hello"}}}},
		{"escapes", &CallToolResult{Content: []Content{&TextContent{Text: "a\"b\\c\n\t\x01<>&\u2028\u2029 é \xff"}}}},
		{"long", &CallToolResult{Content: []Content{&TextContent{Text: strings.Repeat("0123456789", 1000)}}}},
		{"nil block", &CallToolResult{Content: []Content{nil, (*TextContent)(nil)}}},
		{"annotated", &CallToolResult{Content: []Content{&TextContent{Text: "x", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: &half}, Meta: Meta{"k": "v<"}}}}},
		{"bad annotation", &CallToolResult{Content: []Content{&TextContent{Text: "x", Annotations: &Annotations{Priority: &nan}}}}},
		{"other blocks", &CallToolResult{Content: []Content{&ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}, &ResourceLink{URI: "file:///a", Name: "a"}, &TextContent{Text: "t"}}}},
		{"structured", &CallToolResult{StructuredContent: json.RawMessage(`{"a":[1,2.5e3,"x"],"b":null}`)}},
		{"structured spaced", &CallToolResult{StructuredContent: json.RawMessage("{ \"a\" :\n [1, \"<&>\"] }")}},
		{"structured u2028", &CallToolResult{StructuredContent: json.RawMessage("{\"a\":\"\u2028\"}")}},
		{"structured invalid", &CallToolResult{StructuredContent: json.RawMessage(`{"a":`)}},
		{"isError", &CallToolResult{IsError: &yes}},
		{"isError false", &CallToolResult{IsError: &no, Content: []Content{&TextContent{}}}},
		{"meta", &CallToolResult{Meta: Meta{"b": 1, "a": json.Number("2"), "c": []any{"<"}}}},
		{"bad meta", &CallToolResult{Meta: Meta{"x": nan}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkCallToolResultEncoding(t, tc.r) })
	}
	var nilResult *CallToolResult
	if b, err := nilResult.AppendJSON(nil); err != nil || string(b) != "null" {
		t.Errorf("nil result: %s, %v", b, err)
	}
}

// FuzzCallToolResultAppendJSON compares CallToolResult.AppendJSON (and
// json.Marshal, which now uses it) with the encoding/json encoding it
// replaced.
func FuzzCallToolResultAppendJSON(f *testing.F) {
	f.Add("hello", []byte(`{"a":1}`), int8(0), "", "")
	f.Add("a\"b\\c\n<>&\u2028 é \xff", []byte("{ \"a\": \"<\" }"), int8(1), "k", "v&")
	f.Add(strings.Repeat("x", 100), []byte(`not json`), int8(-1), "k", "")
	f.Fuzz(func(t *testing.T, text string, structured []byte, isErr int8, metaKey, metaVal string) {
		r := &CallToolResult{Content: []Content{&TextContent{Text: text}}, StructuredContent: structured}
		if isErr != 0 {
			v := isErr > 0
			r.IsError = &v
		}
		if metaKey != "" {
			r.Meta = Meta{metaKey: metaVal}
			r.Content = append(r.Content, &TextContent{Text: metaVal, Meta: Meta{metaKey: text}})
		}
		checkCallToolResultEncoding(t, r)
	})
}
