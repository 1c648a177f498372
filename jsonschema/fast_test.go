package jsonschema

import (
	"bytes"
	"strings"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// fastSchemas are schemas in the fast validator's simple form.
var fastSchemas = []string{
	`{"type":"object"}`,
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"t","properties":{"n":{"type":"integer","description":"d"},"x":{"type":"number"},"b":{"type":"boolean"},"o":{"type":"object"},"a":{"type":"array"},"z":{"type":"null"},"any":{}},"required":["n","extra"],"additionalProperties":false}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":true}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"s":{"type":"string","default":"x","examples":["y"]}}}`,
}

func TestNewFastValidator(t *testing.T) {
	for _, s := range fastSchemas {
		sc, err := Compile([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if sc.fast == nil {
			t.Errorf("no fast validator for %s", s)
		}
	}
	for _, s := range []string{
		`{}`, `true`, `{"type":"array"}`, `{"type":["object","null"]}`,
		`{"type":"object","properties":{"s":{"type":"string","maxLength":3}}}`,
		`{"type":"object","properties":{"s":{"type":["string","null"]}}}`,
		`{"type":"object","properties":{"s":{"enum":["a"]}}}`,
		`{"type":"object","properties":{"s":{"$ref":"#/$defs/x"}},"$defs":{"x":{}}}`,
		`{"type":"object","patternProperties":{"a":{}}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","properties":{"a\"b":{}}}`,
		`{"type":"object","properties":{"é":{}}}`,
		`{"type":"object","minProperties":1}`,
	} {
		sc, err := Compile([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if sc.fast != nil {
			t.Errorf("a fast validator for %s", s)
		}
	}
}

// checkFastValidator checks that the fast validator never calls valid
// what the full path refuses.
func checkFastValidator(t *testing.T, s *Schema, data []byte) {
	t.Helper()
	if !s.fast.valid(data) {
		return
	}
	v, err := sjs.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("fast validator accepted %q, not JSON for the library: %v", data, err)
	}
	if _, _, found := badNumber(v); found {
		t.Fatalf("fast validator accepted %q, with a number out of range", data)
	}
	if err := s.validate(v); err != nil {
		t.Fatalf("fast validator accepted %q, the full validator says %v", data, err)
	}
}

var fastInstances = []string{
	`{}`, `{"text":"hi"}`, ` { "text" : "hi" , "other" : [1, {"x": null}] } `, `{"text":1}`, `{"text":"a","text":"b"}`,
	`{"te\u0078t":"hi"}`, `{"n":1,"extra":null}`, `{"n":1.0,"extra":0}`, `{"n":1e2,"extra":0}`, `{"n":-7,"extra":"x","x":2.5,"b":true,"o":{},"a":[],"z":null,"any":"q"}`,
	`{"n":1,"extra":1,"unknown":1}`, `{"n":"1","extra":1}`, `{"text":"hi","n":1e999999}`, `{"text":"hi","n":` + strings.Repeat("9", 1001) + `}`,
	`{"text":"hi"} x`, `{"text":"hi",}`, `[]`, `null`, `"s"`, `{"s":"x","é":1}`, "{\"s\":\"bad \xff\"}", `{"text":"` + strings.Repeat("long ", 300) + `"}`,
	`{"n":0}`, `{"n":-0,"extra":[[[[]]]]}`,
}

func TestFastValidator(t *testing.T) {
	for _, s := range fastSchemas {
		sc, err := Compile([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range fastInstances {
			checkFastValidator(t, sc, []byte(in))
		}
	}
	// Valid instances must take the fast path.
	sc, _ := Compile([]byte(fastSchemas[1]))
	for _, in := range []string{`{"text":"hi"}`, `{"text":"hi","n":1e5,"x":{"y":[true]}}`} {
		if !sc.fast.valid([]byte(in)) {
			t.Errorf("fast validator refused %s", in)
		}
	}
}

// FuzzFastValidator checks, on every schema of fastSchemas, that the fast
// validator never accepts an instance the full path refuses.
func FuzzFastValidator(f *testing.F) {
	for _, in := range fastInstances {
		f.Add([]byte(in))
	}
	var schemas []*Schema
	for _, s := range fastSchemas {
		sc, err := Compile([]byte(s))
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, sc)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sc := range schemas {
			checkFastValidator(t, sc, data)
		}
	})
}
