package jsonschema

import (
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
			if !errors.Is(err, ErrInvalidSchema) && !errors.Is(err, ErrUnsupportedDialect) && !errors.Is(err, ErrRemoteRef) {
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
