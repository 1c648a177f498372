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

// FuzzValidateWork compiles and validates random schema and instance
// pairs under the default limits and under small ones (#16.12): Compile
// fails only with the package's typed errors, and validation returns nil,
// a *ValidationError, ErrInvalidJSON or a *LimitError naming one of the
// instance limits, never anything else and never a panic. The estimate
// walks every pair the validator accepts, so this also fuzzes its
// routing against the library's (reference cycles, prefixItems, draft-07
// items arrays). Seeds come from the hostile cases; the corpus lives in
// testdata/fuzz/FuzzValidateWork.
func FuzzValidateWork(f *testing.F) {
	for _, h := range hostileInstances(3) {
		if len(h.schema) < 4000 && len(h.instance) < 4000 {
			f.Add([]byte(h.schema), []byte(h.instance))
		}
	}
	f.Add([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"enum":[1,"a"]}],"additionalItems":{"$ref":"#"}}`), []byte(`[1,[2],[[3e400]]]`))
	f.Add([]byte(`{"prefixItems":[{"pattern":"^(a+)+$"}],"contains":{"const":1},"uniqueItems":true}`), []byte(`["aaa!",1,1]`))
	f.Add([]byte(`{"properties":{"a":{"$ref":"#"}},"patternProperties":{"^b":{"multipleOf":0.5}},"propertyNames":{"maxLength":3},"dependentSchemas":{"a":{"required":["b"]}}}`), []byte(`{"a":{"a":{}},"b":1e-9}`))
	small := Limits{MaxSchemaBytes: 4096, MaxSchemaDepth: 8, MaxSubschemas: 50, MaxPatternSize: 500, MaxInstanceDepth: 8, MaxValidationWork: 200}
	f.Fuzz(func(t *testing.T, schema, instance []byte) {
		for _, opts := range [][]Option{nil, {WithLimits(small)}} {
			s, err := Compile(schema, opts...)
			if err != nil {
				if !errors.Is(err, ErrInvalidSchema) && !errors.Is(err, ErrUnsupportedDialect) && !errors.Is(err, ErrRemoteRef) && !errors.Is(err, ErrLimit) {
					t.Fatalf("untyped error %T: %v", err, err)
				}
				continue
			}
			err = s.ValidateJSON(instance)
			var le *LimitError
			var ve *ValidationError
			switch {
			case err == nil, errors.As(err, &ve), errors.Is(err, ErrInvalidJSON):
			case errors.As(err, &le):
				if le.Limit != LimitValidationWork && le.Limit != LimitInstanceDepth {
					t.Fatalf("ValidateJSON: limit %q", le.Limit)
				}
			default:
				t.Fatalf("ValidateJSON returned %T: %v", err, err)
			}
			if ve != nil && len(ve.Issues) == 0 {
				t.Fatal("a ValidationError without issues")
			}
		}
	})
}
