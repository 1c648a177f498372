package jsonschema

import (
	"encoding/json"
	"testing"
)

var (
	benchInput   = []byte(`{"name":"Ada Lovelace","age":36,"email":"ada@example.org","role":"editor","tags":["math","poetry"]}`)
	benchInvalid = []byte(`{"name":"","age":-1,"email":"nope","role":"root","tags":["a","a"],"extra":1}`)
)

// BenchmarkValidateToolInput validates a typical tool call's arguments:
// an object with 5 properties of mixed types, required, min/max, enum and
// pattern (see toolSchema).
func BenchmarkValidateToolInput(b *testing.B) {
	s, err := Compile([]byte(toolSchema))
	if err != nil {
		b.Fatal(err)
	}
	var decoded any
	if err := json.Unmarshal(benchInput, &decoded); err != nil {
		b.Fatal(err)
	}
	if err := s.Validate(decoded); err != nil {
		b.Fatal(err)
	}
	if err := s.ValidateJSON(benchInvalid); err == nil {
		b.Fatal("invalid input passed")
	}
	b.Run("Validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Validate(decoded); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ValidateJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.ValidateJSON(benchInput); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ValidateJSON/invalid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.ValidateJSON(benchInvalid); err == nil {
				b.Fatal("no error")
			}
		}
	})
}

// BenchmarkCompile compiles the typical tool schema, including its
// validation against the 2020-12 meta-schema.
func BenchmarkCompile(b *testing.B) {
	schema := []byte(toolSchema)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(schema); err != nil {
			b.Fatal(err)
		}
	}
}
