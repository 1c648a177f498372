package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestCompileInvalidSchema(t *testing.T) {
	tests := []struct {
		name      string
		schema    string
		dialect   Dialect // default 2020-12
		locations []string
		contains  string // in the message
	}{
		{"type is a number", `{"type":12}`, "", []string{"/type"}, "/type: must be one of"},
		{"minimum is a string", `{"minimum":"x"}`, "", []string{"/minimum"}, "/minimum: must be number, not string"},
		{"nested", `{"properties":{"a":{"type":"string","minLength":-1}}}`, "", []string{"/properties/a/minLength"}, "must be >= 0"},
		{"type array with a bad member", `{"type":["string",5]}`, "", []string{"/type/1"}, "must be one of"},
		{"required not an array", `{"required":"a"}`, "", []string{"/required"}, "must be array, not string"},
		{"properties not an object", `{"properties":[1]}`, "", []string{"/properties"}, "must be object, not array"},
		{"bad regex", `{"pattern":"("}`, "", []string{"/pattern"}, "must be a valid regex"},
		{"root is a number", `12`, "", []string{""}, "(root): must be boolean or object, not number"},
		{"two problems", `{"type":"nope","maxLength":"x"}`, "", []string{"/maxLength", "/type"}, "/maxLength"},
		{"draft-07 meta-schema", `{"$schema":"http://json-schema.org/draft-07/schema#","required":[]}`, "", nil, ""},
		{"draft-04 meta-schema", `{"$schema":"http://json-schema.org/draft-04/schema#","required":[]}`, "", []string{"/required"}, "/required"},
		{"draft-07 default", `{"minItems":-1}`, Draft7, []string{"/minItems"}, "must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.dialect != "" {
				opts = append(opts, WithDefaultDialect(tt.dialect))
			}
			_, err := Compile([]byte(tt.schema), opts...)
			if tt.locations == nil {
				if err != nil {
					t.Fatalf("Compile: %v (valid in its dialect)", err)
				}
				return
			}
			var ise *InvalidSchemaError
			if !errors.As(err, &ise) {
				t.Fatalf("Compile error = %v (%T), want *InvalidSchemaError", err, err)
			}
			if !errors.Is(err, ErrInvalidSchema) {
				t.Error("errors.Is(err, ErrInvalidSchema) = false")
			}
			var locs []string
			for _, is := range ise.Issues {
				locs = append(locs, is.Location)
			}
			if fmt.Sprint(locs) != fmt.Sprint(tt.locations) {
				t.Errorf("issue locations = %q, want %q (issues: %v)", locs, tt.locations, ise.Issues)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "jsonschema: invalid schema: ") || !strings.Contains(msg, tt.contains) {
				t.Errorf("message %q, want it to contain %q", msg, tt.contains)
			}
		})
	}
}

func TestCompileInvalidSchemaOther(t *testing.T) {
	tests := []struct {
		name, schema, contains string
		syntax                 bool
	}{
		{"malformed JSON", `{"type":}`, "malformed JSON", true},
		{"truncated JSON", `{"type":`, "malformed JSON", false},
		{"trailing data", `{} {}`, "malformed JSON", false},
		{"empty input", ``, "malformed JSON", false},
		{"missing JSON pointer", `{"$ref":"#/$defs/missing"}`, `"#/$defs/missing" not found`, false},
		{"missing anchor", `{"$ref":"#nowhere"}`, "nowhere", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile([]byte(tt.schema))
			var ise *InvalidSchemaError
			if !errors.As(err, &ise) || ise.Err == nil {
				t.Fatalf("Compile error = %v (%T), want *InvalidSchemaError with Err", err, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.contains) {
				t.Errorf("message %q does not contain %q", msg, tt.contains)
			}
			if strings.Contains(msg, baseURI) {
				t.Errorf("message %q leaks the internal base URI", msg)
			}
			var se *json.SyntaxError
			if errors.As(err, &se) != tt.syntax {
				t.Errorf("errors.As(err, *json.SyntaxError) = %v, want %v", !tt.syntax, tt.syntax)
			}
		})
	}
}

// TestCompileNeverFetches refers to documents on a live loopback server
// in every way a schema can, and checks that nothing reached it.
func TestCompileNeverFetches(t *testing.T) {
	var hits atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		fmt.Fprint(w, `{"type":"string"}`)
	})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	tlsSrv := httptest.NewTLSServer(handler)
	defer tlsSrv.Close()

	tests := []struct {
		name   string
		schema string
		url    string // the URL the error must name
		target error
	}{
		{"http $ref", `{"$ref":"` + srv.URL + `/s.json"}`, srv.URL + "/s.json", ErrRemoteRef},
		{"https $ref", `{"$ref":"` + tlsSrv.URL + `/s.json"}`, tlsSrv.URL + "/s.json", ErrRemoteRef},
		{"$ref with fragment", `{"$ref":"` + srv.URL + `/s.json#/$defs/a"}`, srv.URL + "/s.json", ErrRemoteRef},
		{"nested $ref", `{"properties":{"a":{"$ref":"` + srv.URL + `/a.json"}}}`, srv.URL + "/a.json", ErrRemoteRef},
		{"$dynamicRef", `{"$dynamicRef":"` + srv.URL + `/d.json#meta"}`, srv.URL + "/d.json", ErrRemoteRef},
		{"relative to remote $id", `{"$id":"` + srv.URL + `/root.json","$ref":"other.json"}`, srv.URL + "/other.json", ErrRemoteRef},
		{"relative without $id", `{"$ref":"other.json"}`, "mcpstack:///other.json", ErrRemoteRef},
		{"file $ref", `{"$ref":"file:///etc/passwd"}`, "file:///etc/passwd", ErrRemoteRef},
		{"draft-07 $ref", `{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"` + srv.URL + `/s.json"}`, srv.URL + "/s.json", ErrRemoteRef},
		{"custom $schema", `{"$schema":"` + srv.URL + `/meta.json"}`, srv.URL + "/meta.json", ErrUnsupportedDialect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile([]byte(tt.schema))
			if !errors.Is(err, tt.target) {
				t.Fatalf("Compile error = %v (%T), want %v", err, err, tt.target)
			}
			if rre := (*RemoteRefError)(nil); errors.As(err, &rre) && rre.URL != tt.url {
				t.Errorf("URL = %q, want %q", rre.URL, tt.url)
			}
			if !strings.Contains(err.Error(), tt.url) {
				t.Errorf("message %q does not name %q", err, tt.url)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the servers got %d requests, want 0", n)
	}
}

func TestWithResource(t *testing.T) {
	const base = "https://schemas.example.com/"
	opts := []Option{
		WithResource(base+"name.json", []byte(`{"type":"string","minLength":1}`)),
		WithResource(base+"defs.json#", []byte(`{"$defs":{"age":{"type":"integer","minimum":0}}}`)),
	}
	s, err := Compile([]byte(`{
		"type":"object",
		"properties":{
			"name":{"$ref":"`+base+`name.json"},
			"age":{"$ref":"`+base+`defs.json#/$defs/age"}
		}}`), opts...)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if err := s.ValidateJSON([]byte(`{"name":"x","age":3}`)); err != nil {
		t.Errorf("valid instance: %v", err)
	}
	err = s.ValidateJSON([]byte(`{"name":"","age":-3}`))
	want := `jsonschema: validation failed: /age: must be >= 0; /name: must be at least 1 character long`
	if err == nil || err.Error() != want {
		t.Errorf("invalid instance: got %v, want %s", err, want)
	}

	// A registered resource must itself be valid.
	_, err = Compile([]byte(`{"$ref":"`+base+`bad.json"}`), WithResource(base+"bad.json", []byte(`{"type":`)))
	if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("malformed resource: err = %v, want ErrInvalidSchema naming bad.json", err)
	}
	_, err = Compile([]byte(`{"$ref":"`+base+`bad.json"}`), WithResource(base+"bad.json", []byte(`{"type":12}`)))
	if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), `/type: must be one of`) || !strings.Contains(err.Error(), `in resource "`+base+`bad.json"`) {
		t.Errorf("resource invalid against its meta-schema: err = %v, want ErrInvalidSchema at /type in bad.json", err)
	}
	// The root's own issues name no resource, even with an "$id".
	_, err = Compile([]byte(`{"$id":"` + base + `root.json","type":12}`))
	if !errors.Is(err, ErrInvalidSchema) || strings.Contains(err.Error(), "resource") {
		t.Errorf("root with $id: err = %v, want ErrInvalidSchema without a resource", err)
	}
	// Unregistered neighbours still do not resolve.
	if _, err := Compile([]byte(`{"$ref":"`+base+`other.json"}`), opts...); !errors.Is(err, ErrRemoteRef) {
		t.Errorf("unregistered: err = %v, want ErrRemoteRef", err)
	}
}

func TestCustomMetaSchemaResource(t *testing.T) {
	// A meta-schema written in 2020-12 that turns off the validation
	// vocabulary: its schemas are 2020-12 schemas whose "minimum" is
	// not an assertion.
	const meta = "https://schemas.example.com/no-validation"
	metaDoc := `{
		"$schema":"https://json-schema.org/draft/2020-12/schema",
		"$id":"` + meta + `",
		"$vocabulary":{
			"https://json-schema.org/draft/2020-12/vocab/applicator":true,
			"https://json-schema.org/draft/2020-12/vocab/core":true
		},
		"$dynamicAnchor":"meta",
		"allOf":[
			{"$ref":"https://json-schema.org/draft/2020-12/meta/applicator"},
			{"$ref":"https://json-schema.org/draft/2020-12/meta/core"}
		]}`
	schema := []byte(`{"$schema":"` + meta + `","minimum":5}`)
	if _, err := Compile(schema); !errors.Is(err, ErrUnsupportedDialect) {
		t.Fatalf("unregistered custom meta-schema: err = %v, want ErrUnsupportedDialect", err)
	}
	s, err := Compile(schema, WithResource(meta, []byte(metaDoc)))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if s.Dialect() != Draft202012 {
		t.Errorf("Dialect() = %q, want 2020-12", s.Dialect())
	}
	if err := s.Validate(1); err != nil {
		t.Errorf("minimum should not assert without the validation vocabulary: %v", err)
	}
}

// toolSchema is a typical MCP tool input schema.
const toolSchema = `{
  "type": "object",
  "properties": {
    "name":  {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z][A-Za-z0-9 _-]*$"},
    "age":   {"type": "integer", "minimum": 0, "maximum": 150},
    "email": {"type": "string", "pattern": "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$"},
    "role":  {"type": "string", "enum": ["admin", "editor", "viewer"]},
    "tags":  {"type": "array", "items": {"type": "string"}, "maxItems": 3, "uniqueItems": true}
  },
  "required": ["name", "age", "role"],
  "additionalProperties": false
}`

func TestValidationErrorMessages(t *testing.T) {
	s, err := Compile([]byte(toolSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		instance string
		want     string // "" means valid
	}{
		{`{"name":"Ada","age":36,"role":"editor"}`, ""},
		{`{"name":"Ada","age":36,"role":"editor","email":"ada@example.org","tags":["a","b"]}`, ""},
		{`{"name":"Ada","age":-1,"role":"editor"}`, `/age: must be >= 0`},
		{`{"name":"Ada","age":151,"role":"editor"}`, `/age: must be <= 150`},
		{`{"name":"Ada","age":1.5,"role":"editor"}`, `/age: must be integer, not number`},
		{`{"name":"Ada","age":"36","role":"editor"}`, `/age: must be integer, not string`},
		{`{"name":"Ada","role":"editor"}`, `(root): missing required property "age"`},
		{`{}`, `(root): missing required property "age"; (root): missing required property "name"; (root): missing required property "role"`},
		{`{"name":"Ada","age":36,"role":"root"}`, `/role: must be one of "admin", "editor", "viewer"`},
		{`{"name":"","age":36,"role":"editor"}`, `/name: must be at least 1 character long; /name: must match pattern "^[A-Za-z][A-Za-z0-9 _-]*$"`},
		{`{"name":"Ada","age":36,"role":"editor","x":1}`, `(root): unexpected property "x"`},
		{`{"name":"Ada","age":36,"role":"editor","tags":["a","a"]}`, `/tags: must not contain duplicates (items 0 and 1 are equal)`},
		{`{"name":"Ada","age":36,"role":"editor","tags":["a","b","c","d"]}`, `/tags: must have at most 3 items`},
		{`{"name":"Ada","age":36,"role":"editor","tags":[1]}`, `/tags/0: must be string, not number`},
		{`[]`, `(root): must be object, not array`},
		{`null`, `(root): must be object, not null`},
	}
	for _, tt := range tests {
		t.Run(tt.instance, func(t *testing.T) {
			err := s.ValidateJSON([]byte(tt.instance))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ValidateJSON: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrValidation) {
				t.Fatalf("ValidateJSON error = %v (%T), want *ValidationError", err, err)
			}
			if got := err.Error(); got != "jsonschema: validation failed: "+tt.want {
				t.Errorf("message\n got %s\nwant jsonschema: validation failed: %s", got, tt.want)
			}
		})
	}
}

func TestValidationErrorCombinators(t *testing.T) {
	tests := []struct {
		schema, instance, want string
	}{
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, `(root): must be string or integer, not boolean`},
		{`{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `true`, `(root): must be string or integer, not boolean`},
		{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1`, `(root): must match exactly one schema in oneOf, but matches 0 and 1`},
		// The branch that got deeper into the instance is the one reported.
		{`{"anyOf":[{"type":"string"},{"type":"object","properties":{"a":{"minimum":1}}}]}`, `{"a":0}`, `/a: must be >= 1`},
		{`{"anyOf":[{"minimum":10},{"const":"x"}]}`, `5`, `(root): must be >= 10, or must be "x"`},
		{`{"allOf":[{"minimum":1},{"multipleOf":2}]}`, `-1`, `(root): must be >= 1; (root): must be a multiple of 2`},
		{`{"not":{"type":"string"}}`, `"a"`, `(root): must not match the schema in not`},
		{`{"properties":{"a":false}}`, `{"a":1}`, `/a: is not allowed`},
		{`{"const":{"a":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}}`, `1`, `(root): must be {"a":[1,2,3,4,5,6,7,8,9,10,11,12,13,1...`},
		{`{"properties":{"a/b~c":{"type":"string"}}}`, `{"a/b~c":1}`, `/a~1b~0c: must be string, not number`},
		{`{"exclusiveMinimum":0.5,"exclusiveMaximum":2}`, `0.5`, `(root): must be > 0.5`},
		{`{"exclusiveMaximum":2}`, `2`, `(root): must be < 2`},
		{`{"minProperties":2}`, `{"a":1}`, `(root): must have at least 2 properties`},
		{`{"maxProperties":1}`, `{"a":1,"b":2}`, `(root): must have at most 1 property`},
		{`{"minItems":1}`, `[]`, `(root): must have at least 1 item`},
		{`{"maxLength":2}`, `"abc"`, `(root): must be at most 2 characters long`},
		// Kinds without a message of ours fall back to the library's.
		{`{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, `(root): properties 'b' required, if 'a' exists`},
	}
	for _, tt := range tests {
		t.Run(tt.schema+" "+tt.instance, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			err = s.ValidateJSON([]byte(tt.instance))
			if err == nil || err.Error() != "jsonschema: validation failed: "+tt.want {
				t.Errorf("message\n got %v\nwant jsonschema: validation failed: %s", err, tt.want)
			}
		})
	}
}

func TestValidationErrorCapsMessage(t *testing.T) {
	var props []string
	for i := range 15 {
		props = append(props, fmt.Sprintf(`"p%02d"`, i))
	}
	s, err := Compile([]byte(`{"required":[` + strings.Join(props, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(map[string]any{})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate error = %v, want *ValidationError", err)
	}
	if len(ve.Issues) != 15 {
		t.Errorf("len(Issues) = %d, want 15", len(ve.Issues))
	}
	msg := err.Error()
	if !strings.HasSuffix(msg, `(root): missing required property "p09"; and 5 more`) || strings.Contains(msg, "p10") {
		t.Errorf("message not capped at %d issues: %s", maxIssuesInMessage, msg)
	}
}

func TestValidateGoValues(t *testing.T) {
	const schema = `{"type":"object","properties":{"n":{"type":"integer","maximum":10},"tags":{"type":"array","items":{"type":"string"}}},"required":["n"]}`
	s, err := Compile([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	unbounded, err := Compile([]byte(schema), WithLimits(Limits{MaxInstanceDepth: -1}))
	if err != nil {
		t.Fatal(err)
	}
	type args struct {
		N    int      `json:"n"`
		Tags []string `json:"tags,omitempty"`
	}
	tests := []struct {
		name     string
		instance any
		want     error // nil, ErrValidation, ErrInvalidJSON or ErrLimit
		schema   *Schema
	}{
		{"map with float64", map[string]any{"n": float64(3)}, nil, nil},
		{"map with int", map[string]any{"n": 3}, nil, nil},
		{"map with int64 too big", map[string]any{"n": int64(11)}, ErrValidation, nil},
		{"map with uint8", map[string]any{"n": uint8(3)}, nil, nil},
		{"map with json.Number", map[string]any{"n": json.Number("3")}, nil, nil},
		{"map with float32", map[string]any{"n": float32(3.5)}, ErrValidation, nil},
		{"struct", args{N: 3, Tags: []string{"a"}}, nil, nil},
		{"pointer to struct", &args{N: 30}, ErrValidation, nil},
		{"typed map", map[string]int{"n": 3}, nil, nil},
		{"typed slice inside", map[string]any{"n": 1, "tags": []string{"a"}}, nil, nil},
		{"typed slice inside, invalid", map[string]any{"n": 1, "tags": []int{1}}, ErrValidation, nil},
		{"raw message", json.RawMessage(`{"n":4}`), nil, nil},
		{"NaN", map[string]any{"n": math.NaN()}, ErrInvalidJSON, nil},
		{"infinity", math.Inf(1), ErrInvalidJSON, nil},
		{"channel", map[string]any{"n": make(chan int)}, ErrInvalidJSON, nil},
		{"nil", nil, ErrValidation, nil},
		{"cyclic map", cyclic(), ErrInvalidJSON, nil},
		{"over the depth limit", deep(DefaultMaxInstanceDepth), ErrLimit, s},
		{"at the depth limit", deep(DefaultMaxInstanceDepth - 1), ErrValidation, s},
		{"too deep for JSON", deep(maxDepth + 1), ErrInvalidJSON, unbounded},
		{"deep but allowed without a limit", deep(maxDepth - 2), ErrValidation, unbounded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.schema == nil {
				tt.schema = s
			}
			err := tt.schema.Validate(tt.instance)
			switch {
			case tt.want == nil && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Errorf("Validate = %v, want %v", err, tt.want)
			}
		})
	}
}

func cyclic() map[string]any {
	m := map[string]any{"n": 1}
	m["self"] = m
	return m
}

// deep returns an object with "n": 1 holding arrays nested n deep.
func deep(n int) map[string]any {
	var v any = "leaf"
	for range n {
		v = []any{v}
	}
	return map[string]any{"n": 1, "tags": v}
}

func TestValidateJSONMalformed(t *testing.T) {
	s, err := Compile([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{``, `{`, `{"a":1}x`, `{} {}`, `nul`, `[1,]`} {
		err := s.ValidateJSON([]byte(in))
		if !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("ValidateJSON(%q) = %v, want ErrInvalidJSON", in, err)
		}
		if errors.Is(err, ErrValidation) {
			t.Errorf("ValidateJSON(%q): malformed JSON is not a validation failure", in)
		}
	}
}

func TestValidateJSONKeepsPrecision(t *testing.T) {
	// 2^53+1 is not representable as a float64.
	s, err := Compile([]byte(`{"maximum":9007199254740993}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateJSON([]byte(`9007199254740993`)); err != nil {
		t.Errorf("at the maximum: %v", err)
	}
	if err := s.ValidateJSON([]byte(`9007199254740994`)); !errors.Is(err, ErrValidation) {
		t.Errorf("one above the maximum: err = %v, want ErrValidation", err)
	}
}

func TestFormatAssertion(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		opts   []Option
		valid  bool
	}{
		{"2020-12 annotation only", `{"format":"email"}`, nil, true},
		{"2019-09 annotation only", `{"$schema":"https://json-schema.org/draft/2019-09/schema","format":"email"}`, nil, true},
		{"2020-12 asserted on request", `{"format":"email"}`, []Option{WithFormatAssertion()}, false},
		{"draft-07 asserts", `{"$schema":"http://json-schema.org/draft-07/schema#","format":"email"}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema), tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			err = s.ValidateJSON([]byte(`"not an email"`))
			if (err == nil) != tt.valid {
				t.Fatalf("ValidateJSON = %v, want valid=%v", err, tt.valid)
			}
			if err != nil && !strings.Contains(err.Error(), "(root): must be a valid email") {
				t.Errorf("message %q", err)
			}
			if err := s.ValidateJSON([]byte(`"ada@example.org"`)); err != nil {
				t.Errorf("a valid email: %v", err)
			}
		})
	}
}

func TestSchemaConcurrentUse(t *testing.T) {
	s, err := Compile([]byte(toolSchema))
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]any{"name": "Ada", "age": 36.0, "role": "admin"}
	bad := []byte(`{"name":"Ada","age":-1,"role":"admin"}`)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if err := s.Validate(good); err != nil {
					errs <- err
					return
				}
				if err := s.ValidateJSON(bad); err == nil || err.Error() != "jsonschema: validation failed: /age: must be >= 0" {
					errs <- fmt.Errorf("bad input: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
