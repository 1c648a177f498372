package mcp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	spec2026Dir    = specDir + "/2026-07-28"
	schema2026File = spec2026Dir + "/schema.json"
	schema2026URL  = "file:///mcp/schema-2026-07-28.json"
)

// loadSchema2026 loads the 2026-07-28 schema.
func loadSchema2026(t *testing.T) *schemaSet { return loadSchemaFile(t, schema2026File, schema2026URL) }

// mrtrSameJSON reports whether a and b hold the same JSON value.
func mrtrSameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	eq, err := jsonEqual(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return eq
}

// TestMRTRExamples decodes each of the revision's example vectors of the
// MRTR types, validates it, re-encodes it, and checks that the encoding is
// the same JSON and valid against the revision's schema.
func TestMRTRExamples(t *testing.T) {
	schema := loadSchema2026(t)
	cases := []struct {
		dir string
		new func() any
	}{
		{"InputRequiredResult", func() any { return new(InputRequiredResult) }},
		{"InputRequests", func() any { return new(InputRequests) }},
		{"InputResponses", func() any { return new(InputResponses) }},
		{"CallToolRequestParams", func() any { return new(CallToolRequestParams) }},
		{"GetPromptRequestParams", func() any { return new(GetPromptRequestParams) }},
		{"ReadResourceRequestParams", func() any { return new(ReadResourceRequestParams) }},
		{"ListRootsResult", func() any { return new(ListRootsResult) }},
		{"ElicitResult", func() any { return new(ElicitResult) }},
	}
	n := 0
	for _, c := range cases {
		files, _ := filepath.Glob(filepath.Join(spec2026Dir, "examples", c.dir, "*.json"))
		for _, f := range files {
			n++
			t.Run(c.dir+"/"+filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := schema.validate("#/$defs/"+c.dir, data); err != nil {
					t.Fatalf("the example does not match the schema: %v", err)
				}
				v := c.new()
				if err := json.Unmarshal(data, v); err != nil {
					t.Fatalf("decode: %v", err)
				}
				if val, ok := v.(validator); ok {
					if err := val.Validate(); err != nil {
						t.Fatalf("validate: %v", err)
					}
				}
				out, err := json.Marshal(v)
				if err != nil {
					t.Fatalf("encode: %v", err)
				}
				if !mrtrSameJSON(t, data, out) {
					t.Errorf("round trip changed the value:\n in: %s\nout: %s", data, out)
				}
				if err := schema.validate("#/$defs/"+c.dir, out); err != nil {
					t.Errorf("the encoding does not match the schema: %v\n%s", err, out)
				}
			})
		}
	}
	if n < 6 {
		t.Fatalf("found %d examples; want the revision's MRTR vectors", n)
	}
}

// TestInputRequiredResultEncoding checks values built in Go against the
// schema, and the decoding of each input request kind.
func TestInputRequiredResultEncoding(t *testing.T) {
	schema := loadSchema2026(t)
	r := InputRequiredResult{
		InputRequests: InputRequests{
			"user_name": ElicitInput(&ElicitRequestFormParams{
				Message: "What is your name?",
				RequestedSchema: RequestedSchema{
					Properties: map[string]PrimitiveSchemaDefinition{"name": &StringSchema{}},
					Required:   []string{"name"},
				},
			}),
			"capital": SamplingInput(&CreateMessageRequestParams{
				Messages:  []SamplingMessage{{Role: RoleUser, Content: []Content{&TextContent{Text: "Capital of France?"}}}},
				MaxTokens: 100,
			}),
			"roots": RootsInput(),
			"login": ElicitInput(&ElicitRequestURLParams{URL: "https://example.com/login", Message: "Sign in"}),
		},
		RequestState: "opaque",
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"resultType":"input_required",`) {
		t.Errorf("encoding does not lead with the result type: %s", data)
	}
	if err := schema.validate("#/$defs/InputRequiredResult", data); err != nil {
		t.Errorf("schema: %v\n%s", err, data)
	}
	var back InputRequiredResult
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"user_name": MethodElicitationCreate, "capital": MethodSamplingCreateMessage, "roots": MethodRootsList, "login": MethodElicitationCreate} {
		got := back.InputRequests[key]
		if m := got.Method(); m != want {
			t.Errorf("%s: method %q, want %q", key, m, want)
		}
	}
	if _, ok := back.InputRequests["login"].Elicit.(*ElicitRequestURLParams); !ok {
		t.Errorf("login: %T, want URL-mode params", back.InputRequests["login"].Elicit)
	}
	again, _ := json.Marshal(back)
	if !mrtrSameJSON(t, data, again) {
		t.Errorf("round trip changed the value:\n%s\n%s", data, again)
	}
}

// TestMRTRTypesRefuse lists input the MRTR types must refuse.
func TestMRTRTypesRefuse(t *testing.T) {
	cases := []struct {
		name string
		into func() any
		data string
		want error // matched with errors.Is or errors.As; nil for any error
	}{
		{"InputResponses null", func() any { return new(InputResponses) }, `null`, nil},
		{"InputResponses number", func() any { return new(InputResponses) }, `12`, nil},
		{"InputResponses value number", func() any { return new(InputResponses) }, `{"user_name":12345}`, nil},
		{"InputResponses value null", func() any { return new(InputResponses) }, `{"user_name":null}`, nil},
		{"InputResponses value array", func() any { return new(InputResponses) }, `{"a":[]}`, nil},
		{"params inputResponses null", func() any { return new(CallToolRequestParams) }, `{"name":"x","inputResponses":null}`, nil},
		{"params inputResponses string", func() any { return new(GetPromptRequestParams) }, `{"name":"x","inputResponses":"a"}`, nil},
		{"params requestState number", func() any { return new(ReadResourceRequestParams) }, `{"uri":"x:/","requestState":1}`, nil},
		{"InputRequest unknown method", func() any { return new(InputRequest) }, `{"method":"tools/call","params":{}}`, ErrInvalidType},
		{"InputRequest no method", func() any { return new(InputRequest) }, `{"params":{}}`, ErrInvalidType},
		{"InputRequest bad elicitation mode", func() any { return new(InputRequest) }, `{"method":"elicitation/create","params":{"mode":"x","message":"m"}}`, ErrInvalidType},
		{"InputRequiredResult wrong resultType", func() any { return new(InputRequiredResult) }, `{"resultType":"complete","requestState":"s"}`, ErrInvalidType},
		{"InputRequiredResult no resultType", func() any { return new(InputRequiredResult) }, `{"requestState":"s"}`, ErrInvalidType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(c.data), c.into())
			if err == nil {
				t.Fatalf("%s was accepted", c.data)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %v does not match %v", err, c.want)
			}
		})
	}
}

// TestMRTRValidate lists values Validate must refuse, and some it must
// accept.
func TestMRTRValidate(t *testing.T) {
	cases := []struct {
		name string
		v    validator
		ok   bool
	}{
		{"empty result", &InputRequiredResult{}, false},
		{"state only", &InputRequiredResult{RequestState: "s"}, true},
		{"requests only", &InputRequiredResult{InputRequests: InputRequests{"r": RootsInput()}}, true},
		{"empty key", &InputRequiredResult{InputRequests: InputRequests{"": RootsInput()}}, false},
		{"empty request", &InputRequiredResult{InputRequests: InputRequests{"a": {}}}, false},
		{"two requests in one", &InputRequiredResult{InputRequests: InputRequests{"a": {Roots: &RequestParams{}, Sampling: &CreateMessageRequestParams{}}}}, false},
		{"typed nil elicitation", &InputRequiredResult{InputRequests: InputRequests{"a": ElicitInput((*ElicitRequestFormParams)(nil))}}, false},
		{"URL elicitation without id", &InputRequiredResult{InputRequests: InputRequests{"a": ElicitInput(&ElicitRequestURLParams{URL: "https://x.example/", Message: "m"})}}, true},
		{"URL elicitation relative", &InputRequiredResult{InputRequests: InputRequests{"a": ElicitInput(&ElicitRequestURLParams{URL: "/x", Message: "m"})}}, false},
		{"sampling without messages' max tokens", &InputRequiredResult{InputRequests: InputRequests{"a": SamplingInput(&CreateMessageRequestParams{MaxTokens: -1})}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.v.Validate()
			if (err == nil) != c.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, c.ok)
			}
		})
	}
}

// TestInputResponsesDecode checks Decode per method, a missing key and a
// response of the wrong shape.
func TestInputResponsesDecode(t *testing.T) {
	var rs InputResponses
	if err := json.Unmarshal([]byte(`{
		"e": {"action":"accept","content":{"name":"octocat"}},
		"s": {"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"},
		"r": {"roots":[{"uri":"file:///x","name":"X"}]},
		"bad": {"action":"maybe"},
		"extra": {"foo":1}
	}`), &rs); err != nil {
		t.Fatal(err)
	}
	if res, err := rs.Decode("e", MethodElicitationCreate); err != nil || res.(*ElicitResult).Content["name"] != "octocat" {
		t.Errorf("elicit: %#v, %v", res, err)
	}
	if res, err := rs.Decode("s", MethodSamplingCreateMessage); err != nil || res.(*CreateMessageResult).Model != "m" {
		t.Errorf("sampling: %#v, %v", res, err)
	}
	if res, err := rs.Decode("r", MethodRootsList); err != nil || len(res.(*ListRootsResult).Roots) != 1 {
		t.Errorf("roots: %#v, %v", res, err)
	}
	if _, err := rs.Decode("missing", MethodRootsList); !errors.Is(err, ErrNoInputResponse) {
		t.Errorf("missing key: %v", err)
	}
	var ve *ValidationError
	if _, err := rs.Decode("bad", MethodElicitationCreate); !errors.As(err, &ve) {
		t.Errorf("bad action: %v", err)
	}
	if _, err := rs.Decode("r", MethodSamplingCreateMessage); err == nil {
		t.Error("a roots result decoded as a sampling result")
	}
	if _, err := rs.Decode("e", MethodToolsCall); !errors.Is(err, ErrInvalidType) {
		t.Errorf("unknown method: %v", err)
	}
	put := InputResponses{}
	if err := put.Put("k", &ElicitResult{Action: ElicitActionDecline}); err != nil {
		t.Fatal(err)
	}
	if string(put["k"]) != `{"action":"decline"}` {
		t.Errorf("Put: %s", put["k"])
	}
}
