package jsonschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNumberOK(t *testing.T) {
	tests := []struct {
		s  string
		ok bool
	}{
		{"0", true}, {"-0", true}, {"12", true}, {"-12.5", true}, {"1e3", true}, {"1E+3", true},
		{"1.5e-3", true}, {"1e10000", true}, {"1e-10000", true}, {"0.0", true},
		{strings.Repeat("9", maxNumberLen), true},

		{"", false}, {"-", false}, {"01", false}, {"1.", false}, {".5", false}, {"+1", false},
		{"1e", false}, {"1e+", false}, {"1x", false}, {"abc", false}, {"NaN", false}, {"Infinity", false},
		{"1e10001", false}, {"1e-10001", false}, {"1e1000010", false}, {"1e99999999999999999999", false},
		{strings.Repeat("9", maxNumberLen+1), false},
	}
	for _, tt := range tests {
		if got := numberOK(tt.s); got != tt.ok {
			t.Errorf("numberOK(%.20q) = %v, want %v", tt.s, got, tt.ok)
		}
	}
}

func TestExtremeNumbers(t *testing.T) {
	// The library cannot represent these; they must be refused, not crash.
	_, err := Compile([]byte(`{"properties":{"a":{"multipleOf":1e1000010}}}`))
	var ise *InvalidSchemaError
	if !errors.As(err, &ise) || len(ise.Issues) != 1 || ise.Issues[0].Location != "/properties/a/multipleOf" {
		t.Fatalf("schema with 1e1000010: err = %v, want *InvalidSchemaError at /properties/a/multipleOf", err)
	}
	_, err = Compile([]byte(`{"$ref":"https://e.com/s"}`), WithResource("https://e.com/s", []byte(`{"minimum":1e1000010}`)))
	if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "/minimum") {
		t.Errorf("resource with 1e1000010: err = %v, want ErrInvalidSchema naming /minimum", err)
	}

	s, err := Compile([]byte(`{"properties":{"a":{"minimum":0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		err  error
		loc  string
	}{
		{"ValidateJSON", s.ValidateJSON([]byte(`{"a":[1,-1e1000010]}`)), "/a/1"},
		{"Validate json.Number out of range", s.Validate(map[string]any{"a": json.Number("1e1000010")}), "/a"},
		{"Validate malformed json.Number", s.Validate(map[string]any{"a": json.Number("abc")}), ""},
	} {
		if !errors.Is(tt.err, ErrInvalidJSON) || !strings.Contains(tt.err.Error(), tt.loc) {
			t.Errorf("%s: err = %v, want ErrInvalidJSON naming %q", tt.name, tt.err, tt.loc)
		}
	}
	if err := s.ValidateJSON([]byte(`{"a":1e10000}`)); err != nil {
		t.Errorf("1e10000 is within range: %v", err)
	}
}

func TestApplyDefaultsBeyondFloat64(t *testing.T) {
	s, err := Compile([]byte(`{"properties":{"big":{"default":1e400},"small":{"default":2}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := ApplyDefaults(s, nil)
	if got["big"] != json.Number("1e400") || got["small"] != 2.0 {
		t.Errorf("ApplyDefaults = %#v, want big as json.Number and small as float64", got)
	}
}
