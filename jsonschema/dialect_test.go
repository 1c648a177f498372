package jsonschema

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseDialect(t *testing.T) {
	tests := []struct {
		uri  string
		want Dialect // "" means unsupported
	}{
		{"https://json-schema.org/draft/2020-12/schema", Draft202012},
		{"https://json-schema.org/draft/2020-12/schema#", Draft202012},
		{"http://json-schema.org/draft/2020-12/schema", Draft202012},
		{"http://json-schema.org/draft/2020-12/schema#", Draft202012},
		{"https://json-schema.org/draft/2019-09/schema", Draft201909},
		{"https://json-schema.org/draft/2019-09/schema#", Draft201909},
		{"http://json-schema.org/draft/2019-09/schema", Draft201909},
		{"http://json-schema.org/draft-07/schema#", Draft7},
		{"http://json-schema.org/draft-07/schema", Draft7},
		{"https://json-schema.org/draft-07/schema#", Draft7},
		{"https://json-schema.org/draft-07/schema", Draft7},
		{"http://json-schema.org/draft-06/schema#", Draft6},
		{"http://json-schema.org/draft-06/schema", Draft6},
		{"https://json-schema.org/draft-06/schema#", Draft6},
		{"http://json-schema.org/draft-04/schema#", Draft4},
		{"http://json-schema.org/draft-04/schema", Draft4},
		{"https://json-schema.org/draft-04/schema#", Draft4},

		{"", ""},
		{"https://json-schema.org/schema", ""}, // "latest": a moving target
		{"http://json-schema.org/draft-03/schema#", ""},            // too old
		{"https://json-schema.org/draft/next/schema", ""},          // unreleased
		{"https://json-schema.org/draft/2020-12/schema#/x", ""},    // non-empty fragment
		{"https://json-schema.org/draft/2020-12/schema##", ""},     // not an empty fragment
		{"json-schema.org/draft/2020-12/schema", ""},               // no scheme
		{"ftp://json-schema.org/draft/2020-12/schema", ""},         // wrong scheme
		{"https://json-schema.org/draft/2020-12/schema/", ""},      // trailing slash
		{"https://JSON-SCHEMA.ORG/draft/2020-12/schema", ""},       // not the canonical spelling
		{"https://example.com/draft/2020-12/schema", ""},           // wrong host
		{"https://json-schema.org/draft/2020-12/meta/core", ""},    // a vocabulary, not a dialect
		{" https://json-schema.org/draft/2020-12/schema", ""},      // stray space
		{"urn:example:my-dialect", ""},                             // custom, unregistered
		{"http://localhost:1234/draft2020-12/metaschema.json", ""}, // custom, unregistered
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.uri), func(t *testing.T) {
			got, err := ParseDialect(tt.uri)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseDialect = %q, %v; want %q, nil", got, err, tt.want)
				}
				return
			}
			var ude *UnsupportedDialectError
			if !errors.As(err, &ude) || ude.URI != tt.uri {
				t.Fatalf("ParseDialect = %q, %v; want *UnsupportedDialectError for %q", got, err, tt.uri)
			}
			if !errors.Is(err, ErrUnsupportedDialect) {
				t.Errorf("errors.Is(%v, ErrUnsupportedDialect) = false", err)
			}
		})
	}
}

func TestCompileDialectFromSchemaKeyword(t *testing.T) {
	tests := []struct {
		schema string
		want   Dialect
	}{
		{`{}`, Draft202012},
		{`true`, Draft202012},
		{`{"type":"object"}`, Draft202012},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema"}`, Draft202012},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema#"}`, Draft202012},
		{`{"$schema":"http://json-schema.org/draft/2020-12/schema"}`, Draft202012},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema"}`, Draft201909},
		{`{"$schema":"http://json-schema.org/draft-07/schema#"}`, Draft7},
		{`{"$schema":"http://json-schema.org/draft-07/schema"}`, Draft7},
		{`{"$schema":"https://json-schema.org/draft-07/schema#"}`, Draft7},
		{`{"$schema":"http://json-schema.org/draft-06/schema#"}`, Draft6},
		{`{"$schema":"http://json-schema.org/draft-04/schema#"}`, Draft4},
		{`{"$schema":"https://json-schema.org/draft-04/schema"}`, Draft4},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if got := s.Dialect(); got != tt.want {
				t.Errorf("Dialect() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCompileUnsupportedDialect(t *testing.T) {
	for _, uri := range []string{
		"https://json-schema.org/schema",
		"http://json-schema.org/draft-03/schema#",
		"https://json-schema.org/draft/2021-01/schema",
		"https://example.com/my-dialect",
		"",
		"not a uri at all",
	} {
		t.Run(strconv.Quote(uri), func(t *testing.T) {
			_, err := Compile([]byte(`{"$schema":` + strconv.Quote(uri) + `,"type":"object"}`))
			var ude *UnsupportedDialectError
			if !errors.As(err, &ude) {
				t.Fatalf("Compile error = %v (%T), want *UnsupportedDialectError", err, err)
			}
			if ude.URI != uri {
				t.Errorf("URI = %q, want %q", ude.URI, uri)
			}
			if !errors.Is(err, ErrUnsupportedDialect) {
				t.Error("errors.Is(err, ErrUnsupportedDialect) = false")
			}
			msg := err.Error()
			if !strings.Contains(msg, "unsupported JSON Schema dialect") || !strings.Contains(msg, strconv.Quote(uri)) {
				t.Errorf("message %q does not say the dialect %q is unsupported", msg, uri)
			}
		})
	}
}

func TestCompileUnsupportedDialectInEmbeddedResource(t *testing.T) {
	schema := `{"$defs":{"x":{"$id":"https://example.com/x","$schema":"https://example.com/other-dialect"}}}`
	_, err := Compile([]byte(schema))
	var ude *UnsupportedDialectError
	if !errors.As(err, &ude) || ude.URI != "https://example.com/other-dialect" {
		t.Fatalf("Compile error = %v (%T), want *UnsupportedDialectError for the embedded $schema", err, err)
	}
}

func TestCompileSchemaKeywordNotString(t *testing.T) {
	for _, v := range []string{`12`, `null`, `true`, `{}`, `["https://json-schema.org/draft/2020-12/schema"]`} {
		t.Run(v, func(t *testing.T) {
			_, err := Compile([]byte(`{"$schema":` + v + `}`))
			var ise *InvalidSchemaError
			if !errors.As(err, &ise) {
				t.Fatalf("Compile error = %v (%T), want *InvalidSchemaError", err, err)
			}
			if len(ise.Issues) != 1 || ise.Issues[0].Location != "/$schema" || !strings.HasPrefix(ise.Issues[0].Message, "must be string") {
				t.Errorf("Issues = %v, want one at /$schema saying it must be a string", ise.Issues)
			}
			if errors.Is(err, ErrUnsupportedDialect) {
				t.Error("a non-string $schema is an invalid schema, not an unsupported dialect")
			}
		})
	}
}

func TestWithDefaultDialect(t *testing.T) {
	// "items" as an array is a tuple in draft-07 but not a valid schema
	// in 2020-12 (which has prefixItems instead).
	tuple := []byte(`{"items":[{"type":"string"}]}`)
	if _, err := Compile(tuple); !errors.Is(err, ErrInvalidSchema) {
		t.Fatalf("2020-12 default: Compile error = %v, want ErrInvalidSchema", err)
	}
	s, err := Compile(tuple, WithDefaultDialect(Draft7))
	if err != nil {
		t.Fatalf("draft-07 default: %v", err)
	}
	if s.Dialect() != Draft7 {
		t.Errorf("Dialect() = %q, want draft-07", s.Dialect())
	}
	if err := s.ValidateJSON([]byte(`[1]`)); !errors.Is(err, ErrValidation) {
		t.Errorf("draft-07 tuple should reject [1], got %v", err)
	}
	// $schema wins over the default.
	s, err = Compile([]byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema"}`), WithDefaultDialect(Draft4))
	if err != nil || s.Dialect() != Draft202012 {
		t.Errorf("explicit $schema with a default: %v, %v", s, err)
	}
	// An unknown default is reported like an unknown $schema.
	if _, err := Compile([]byte(`{}`), WithDefaultDialect("https://example.com/d")); !errors.Is(err, ErrUnsupportedDialect) {
		t.Errorf("unknown default dialect: err = %v, want ErrUnsupportedDialect", err)
	}
}

// TestDialectSemantics checks that each dialect's own rules apply, not
// just its name.
func TestDialectSemantics(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		instance string
		valid    bool
	}{
		// draft-04: exclusiveMinimum is a boolean modifier of minimum.
		{"draft4 exclusive boundary", `{"$schema":"http://json-schema.org/draft-04/schema#","minimum":5,"exclusiveMinimum":true}`, `5`, false},
		{"draft4 above boundary", `{"$schema":"http://json-schema.org/draft-04/schema#","minimum":5,"exclusiveMinimum":true}`, `6`, true},
		// draft-06+: exclusiveMinimum is a number.
		{"draft6 exclusiveMinimum", `{"$schema":"http://json-schema.org/draft-06/schema#","exclusiveMinimum":5}`, `5`, false},
		// draft-07: "items" array is a tuple and additionalItems applies.
		{"draft7 additionalItems", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`, false},
		// draft-07: $ref siblings are ignored.
		{"draft7 ref siblings ignored", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","maxLength":1}`, `"abc"`, true},
		// 2019-09 and 2020-12: $ref siblings apply.
		{"2019-09 ref siblings apply", `{"$schema":"https://json-schema.org/draft/2019-09/schema","$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":1}`, `"abc"`, false},
		{"2020-12 ref siblings apply", `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":1}`, `"abc"`, false},
		// 2020-12: prefixItems plus items.
		{"2020-12 prefixItems", `{"prefixItems":[{"type":"string"}],"items":false}`, `["a",1]`, false},
		// 2020-12: unevaluatedProperties.
		{"2020-12 unevaluatedProperties", `{"properties":{"a":true},"unevaluatedProperties":false}`, `{"a":1,"b":2}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			err = s.ValidateJSON([]byte(tt.instance))
			if (err == nil) != tt.valid {
				t.Errorf("ValidateJSON(%s) = %v, want valid=%v", tt.instance, err, tt.valid)
			}
		})
	}
}

func TestSupportedDialects(t *testing.T) {
	got := SupportedDialects()
	want := []Dialect{Draft202012, Draft201909, Draft7, Draft6, Draft4}
	if len(got) != len(want) {
		t.Fatalf("SupportedDialects() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("SupportedDialects() = %v, want %v", got, want)
		}
		if d, err := ParseDialect(string(got[i])); err != nil || d != got[i] {
			t.Errorf("ParseDialect(%q) = %q, %v", got[i], d, err)
		}
	}
	got[0] = "changed"
	if SupportedDialects()[0] != Draft202012 {
		t.Error("SupportedDialects returned shared state")
	}
}
