package jsonschema

import (
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"testing"
	"time"
)

type inferInner struct {
	City string `json:"city"`
}

type inferEmbedded struct {
	Shared string `json:"shared"`
	Hidden string `json:"name"` // shadowed by the outer "name"
}

type inferAll struct {
	Name  string          `json:"name" jsonschema:"the person's name"`
	Age   int             `json:"age,omitempty"`
	Count uint8           `json:"count"`
	Score float64         `json:"score,omitzero"`
	OK    bool            `json:"ok"`
	Nick  *string         `json:"nick"`
	Tags  []string        `json:"tags"`
	Pair  [2]int          `json:"pair"`
	Attrs map[string]int  `json:"attrs,omitempty"`
	Home  inferInner      `json:"home"`
	Work  *inferInner     `json:"work,omitempty"`
	When  time.Time       `json:"when"`
	Raw   json.RawMessage `json:"raw,omitempty"`
	Any   any             `json:"any,omitempty"`
	Blob  []byte          `json:"blob,omitempty"`
	Addr  netip.Addr      `json:"addr"`
	Skip  string          `json:"-"`
	NoTag string
	//lint:ignore U1000 an unexported field, which the schema must leave out
	private string
	IntKeys map[int]string    `json:"intKeys,omitempty"`
	Nested  map[string][]bool `json:"nested,omitempty"`
	inferEmbedded
}

func TestForStruct(t *testing.T) {
	raw, err := For[inferAll]()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []any{"name", "count", "ok", "tags", "pair", "home", "when", "addr", "NoTag", "shared"},
		"properties": map[string]any{
			"name":    map[string]any{"type": "string", "description": "the person's name"},
			"age":     map[string]any{"type": "integer"},
			"count":   map[string]any{"type": "integer", "minimum": 0.0},
			"score":   map[string]any{"type": "number"},
			"ok":      map[string]any{"type": "boolean"},
			"nick":    map[string]any{"type": []any{"null", "string"}},
			"tags":    map[string]any{"type": []any{"null", "array"}, "items": map[string]any{"type": "string"}},
			"pair":    map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 2.0, "maxItems": 2.0},
			"attrs":   map[string]any{"type": []any{"null", "object"}, "additionalProperties": map[string]any{"type": "integer"}},
			"home":    map[string]any{"type": "object", "additionalProperties": false, "required": []any{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}}},
			"work":    map[string]any{"type": []any{"null", "object"}, "additionalProperties": false, "required": []any{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}}},
			"when":    map[string]any{"type": "string", "format": "date-time"},
			"raw":     map[string]any{},
			"any":     map[string]any{},
			"blob":    map[string]any{"type": []any{"null", "string"}, "contentEncoding": "base64"},
			"addr":    map[string]any{"type": "string"},
			"NoTag":   map[string]any{"type": "string"},
			"intKeys": map[string]any{"type": []any{"null", "object"}, "additionalProperties": map[string]any{"type": "string"}},
			"nested":  map[string]any{"type": []any{"null", "object"}, "additionalProperties": map[string]any{"type": []any{"null", "array"}, "items": map[string]any{"type": "boolean"}}},
			"shared":  map[string]any{"type": "string"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("schema:\n%s", gj)
	}
}

type recursive struct {
	Next *recursive `json:"next"`
}

type recursiveEmbed struct {
	//lint:ignore U1000 the embedding itself is what the test infers from
	*recursiveEmbed
	X int
}

func TestForScalarsAndErrors(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		want string // "" for an error
	}{
		{reflect.TypeFor[string](), `{"type":"string"}`},
		{reflect.TypeFor[int64](), `{"type":"integer"}`},
		{reflect.TypeFor[*bool](), `{"type":["null","boolean"]}`},
		{reflect.TypeFor[**bool](), `{"type":["null","boolean"]}`},
		{reflect.TypeFor[any](), `{}`},
		{reflect.TypeFor[time.Time](), `{"format":"date-time","type":"string"}`},
		{reflect.TypeFor[chan int](), ""},
		{reflect.TypeFor[func()](), ""},
		{reflect.TypeFor[complex128](), ""},
		{reflect.TypeFor[map[[2]int]string](), ""},
		{reflect.TypeFor[recursive](), ""},
		{reflect.TypeFor[recursiveEmbed](), ""},
		{reflect.TypeFor[struct{ C chan int }](), ""},
	}
	for _, tt := range tests {
		got, err := ForType(tt.typ)
		if tt.want == "" {
			if !errors.Is(err, ErrUninferable) {
				t.Errorf("%v: err = %v, want ErrUninferable", tt.typ, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%v: %s, %v; want %s", tt.typ, got, err, tt.want)
		}
	}
}

// TestForValidates checks that inferred schemas compile and accept what
// encoding/json produces for the type, and refuse what it would not.
func TestForValidates(t *testing.T) {
	raw, err := For[inferAll]()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	var zero inferAll
	b, _ := json.Marshal(zero)
	if err := s.ValidateJSON(b); err != nil {
		t.Errorf("zero value %s: %v", b, err)
	}
	nick := "n"
	full := inferAll{Name: "a", Age: 3, Nick: &nick, Tags: []string{"x"}, Attrs: map[string]int{"k": 1}, Work: &inferInner{City: "c"}, When: time.Unix(0, 0).UTC(), Raw: json.RawMessage(`[1]`), Any: 1.5, Blob: []byte("hi"), IntKeys: map[int]string{1: "a"}}
	b, _ = json.Marshal(full)
	if err := s.ValidateJSON(b); err != nil {
		t.Errorf("full value %s: %v", b, err)
	}
	for _, bad := range []string{
		`{}`,
		`{"name":1,"count":0,"ok":true,"tags":null,"pair":[1,2],"home":{"city":""},"when":"x","addr":"","NoTag":"","shared":""}`,
		`{"name":"a","count":-1,"ok":true,"tags":null,"pair":[1,2],"home":{"city":""},"when":"x","addr":"","NoTag":"","shared":""}`,
		`{"name":"a","count":0,"ok":true,"tags":null,"pair":[1],"home":{"city":""},"when":"x","addr":"","NoTag":"","shared":""}`,
		`{"name":"a","count":0,"ok":true,"tags":null,"pair":[1,2],"home":{"city":""},"when":"x","addr":"","NoTag":"","shared":"","extra":1}`,
	} {
		if err := s.ValidateJSON([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
