package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzCompile checks that Compile never panics, that every failure is one
// of the package's typed errors, and that a compiled schema can validate
// arbitrary instances (here: the schema document itself, and a few fixed
// values) without panicking. Seeds live in testdata/fuzz/FuzzCompile.
func FuzzCompile(f *testing.F) {
	f.Add([]byte(toolSchema))
	f.Add([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{}]}`))
	instances := []any{nil, true, 1.5, "x", []any{1.0, "a"}, map[string]any{"a": 1.0}}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Compile(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidSchema) && !errors.Is(err, ErrUnsupportedDialect) && !errors.Is(err, ErrRemoteRef) && !errors.Is(err, ErrLimit) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		check := func(err error) {
			if err != nil && !errors.Is(err, ErrValidation) {
				t.Fatalf("validation returned %T: %v", err, err)
			}
		}
		check(s.ValidateJSON(data))
		for _, v := range instances {
			check(s.Validate(v))
		}
		ApplyDefaults(s, nil)
	})
}

// FuzzLimits checks the bounds of #16.12 on arbitrary input: the linear
// depth pre-pass agrees with the real nesting of every valid JSON text
// (strings with escaped quotes and brackets included); Compile under small
// limits never panics and fails only with the package's typed errors; and
// validation of bounded schemas returns only nil, ErrValidation, ErrLimit
// or ErrInvalidJSON. Seeds live in testdata/fuzz/FuzzLimits.
func FuzzLimits(f *testing.F) {
	for _, h := range hostileSchemas() {
		if len(h.schema) < 2000 {
			f.Add([]byte(h.schema))
		}
	}
	f.Add([]byte(`{"pattern":"((x+x+)+y){1000}","items":{"$ref":"#"},"enum":["[{\\\"]"]}`))
	f.Add([]byte(`[[["\"]]"]]]`))
	limits := Limits{MaxSchemaBytes: 4096, MaxSchemaDepth: 8, MaxSubschemas: 50, MaxPatternSize: 500, MaxInstanceDepth: 8}
	f.Fuzz(func(t *testing.T, data []byte) {
		if json.Valid(data) {
			d := textDepth(data)
			if err := checkInstanceDepth(data, d); err != nil {
				t.Fatalf("depth %d refused at its own depth: %v", d, err)
			}
			if d > 0 && checkInstanceDepth(data, d-1) == nil {
				t.Fatalf("depth %d accepted at %d", d, d-1)
			}
		}
		s, err := Compile(data, WithLimits(limits))
		if err != nil {
			if !errors.Is(err, ErrInvalidSchema) && !errors.Is(err, ErrUnsupportedDialect) && !errors.Is(err, ErrRemoteRef) && !errors.Is(err, ErrLimit) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		for _, in := range [][]byte{data, []byte(`[[[[[[[[[[]]]]]]]]]]`), []byte(`{"a":"aaaaaaaaaaaaaaaaaaaa!"}`)} {
			if err := s.ValidateJSON(in); err != nil && !errors.Is(err, ErrValidation) && !errors.Is(err, ErrLimit) && !errors.Is(err, ErrInvalidJSON) {
				t.Fatalf("ValidateJSON returned %T: %v", err, err)
			}
		}
	})
}

// textDepth is the deepest nesting of arrays and objects in the valid JSON
// text data, repeated member names included (decoding would drop all but
// the last).
func textDepth(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	d, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			d++
			deepest = max(deepest, d)
		case json.Delim('}'), json.Delim(']'):
			d--
		}
	}
}
