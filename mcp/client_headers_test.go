package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestToolHeaderParams checks each x-mcp-header constraint of revision
// 2026-07-28 (Streamable HTTP, "Schema Extension").
func TestToolHeaderParams(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // "Name=path;..." or "invalid"
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, ""},
		{"string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`, "A=a"},
		{"integer and boolean", `{"type":"object","properties":{"i":{"type":"integer","x-mcp-header":"I"},"b":{"type":"boolean","x-mcp-header":"B"}}}`, "B=b;I=i"},
		{"nested properties", `{"type":"object","properties":{"o":{"type":"object","properties":{"s":{"type":"string","x-mcp-header":"S"}}}}}`, "S=o.s"},
		{"a property named x-mcp-header", `{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, ""},
		{"empty", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "invalid"},
		{"space", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`, "invalid"},
		{"colon", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}`, "invalid"},
		{"non-ASCII", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Région"}}}`, "invalid"},
		{"tab", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\t1"}}}`, "invalid"},
		{"not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`, "invalid"},
		{"number type", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, "invalid"},
		{"object type", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, "invalid"},
		{"array type", `{"type":"object","properties":{"a":{"type":"array","x-mcp-header":"A"}}}`, "invalid"},
		{"null type", `{"type":"object","properties":{"a":{"type":"null","x-mcp-header":"A"}}}`, "invalid"},
		{"no type", `{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`, "invalid"},
		{"duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"R"},"b":{"type":"string","x-mcp-header":"R"}}}`, "invalid"},
		{"duplicate by case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`, "invalid"},
		{"on the root", `{"type":"string","x-mcp-header":"A"}`, "invalid"},
		{"under items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, "invalid"},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}},"properties":{}}`, "invalid"},
		{"under anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "invalid"},
		{"under if", `{"type":"object","if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, "invalid"},
		{"not JSON", `{"x-mcp-header"`, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs, err := toolParamHeaders(json.RawMessage(tt.schema))
			if tt.want == "invalid" {
				if !errors.Is(err, ErrInvalidHeaderAnnotation) {
					t.Fatalf("err = %v, want ErrInvalidHeaderAnnotation", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hs {
				got = append(got, h.name+"="+strings.Join(h.path, "."))
			}
			if s := strings.Join(sortedCopy(got), ";"); s != tt.want {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestEncodeHeaderValue checks the Value Encoding table of the revision.
func TestEncodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		"us west 1":          "us west 1",
		"":                   "",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"\tindented":         "=?base64?CWluZGVudGVk?=",
		"a\tb":               "=?base64?YQli?=",
	} {
		if got := EncodeHeaderValue(in); got != want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzHeaderValues checks that whatever a server's schema and a caller's
// value hold, the header value is a valid, reversible field value and the
// annotation walk never panics.
func FuzzHeaderValues(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`, "x")
	f.Add(`{"properties":{"x-mcp-header":{"properties":{"x-mcp-header":{"type":"integer","x-mcp-header":"x"}}}}}`, " =?base64?a?= ")
	f.Fuzz(func(t *testing.T, schema, value string) {
		hs, err := toolParamHeaders(json.RawMessage(schema))
		if err == nil {
			seen := map[string]bool{}
			for _, h := range hs {
				k := strings.ToLower(h.name)
				if h.name == "" || seen[k] {
					t.Fatalf("accepted %+v", hs)
				}
				seen[k] = true
			}
		}
		enc := EncodeHeaderValue(value)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] > 0x7e {
				t.Fatalf("unsafe byte in %q", enc)
			}
		}
		if b, ok := strings.CutPrefix(enc, "=?base64?"); ok && strings.HasSuffix(b, "?=") {
			dec, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(b, "?="))
			if err != nil || string(dec) != value {
				t.Fatalf("%q encodes as %q, which decodes to %q (%v)", value, enc, dec, err)
			}
		} else if enc != value {
			t.Fatalf("%q sent as %q", value, enc)
		}
	})
}
