package mcp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// resultTypeMember is the result member the modern leg's encoder adds.
const resultTypeMember = "resultType"

// examples2026 returns the example files of one schema type.
func examples2026(t *testing.T, typ string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(spec2026Dir+"/examples", typ, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		if _, err := os.Stat(spec2026Dir + "/examples"); errors.Is(err, os.ErrNotExist) {
			t.Skipf("examples not found: %v", err)
		}
		t.Fatalf("no examples of %s", typ)
	}
	return files
}

// sameJSON2026 reports whether a and b are the same JSON value, ignoring the
// top-level members named in ignore.
func sameJSON2026(t *testing.T, a, b []byte, ignore ...string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	for _, k := range ignore {
		if m, ok := va.(map[string]any); ok {
			delete(m, k)
		}
		if m, ok := vb.(map[string]any); ok {
			delete(m, k)
		}
	}
	return reflect.DeepEqual(va, vb)
}

// TestExamples2026RoundTrip decodes every example vector of revision
// 2026-07-28 whose type this file owns into its Go type, encodes it again,
// and checks that nothing was lost (resultType excepted for the result
// types that get it from the server's encoder, see modernResult) and that
// the encoding is valid against the revision's schema.
func TestExamples2026RoundTrip(t *testing.T) {
	schema := loadSchema2026(t)
	tests := []struct {
		typ string
		new func() any
		// spliced: the Go type has no resultType of its own; the modern
		// leg's encoder adds it.
		spliced bool
	}{
		{"DiscoverResult", func() any { return new(DiscoverResult) }, false},
		{"SubscriptionsListenResult", func() any { return new(SubscriptionsListenResult) }, false},
		{"ListToolsResult", func() any { return new(ListToolsResult) }, true},
		{"ListPromptsResult", func() any { return new(ListPromptsResult) }, true},
		{"ListResourcesResult", func() any { return new(ListResourcesResult) }, true},
		{"ListResourceTemplatesResult", func() any { return new(ListResourceTemplatesResult) }, true},
		{"ReadResourceResult", func() any { return new(ReadResourceResult) }, true},
		{"ClientCapabilities", func() any { return new(ClientCapabilities) }, false},
		{"ServerCapabilities", func() any { return new(ServerCapabilities) }, false},
	}
	for _, tc := range tests {
		for _, file := range examples2026(t, tc.typ) {
			t.Run(tc.typ+"/"+filepath.Base(file), func(t *testing.T) {
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				v := tc.new()
				if err := json.Unmarshal(data, v); err != nil {
					t.Fatalf("decode: %v", err)
				}
				if val, ok := v.(validator); ok {
					if err := val.Validate(); err != nil {
						t.Fatalf("Validate: %v", err)
					}
				}
				out, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				var ignore []string
				if tc.spliced {
					ignore = []string{resultTypeMember}
				}
				if !sameJSON2026(t, data, out, ignore...) {
					t.Errorf("round trip lost something:\n in: %s\nout: %s", data, out)
				}
				if tc.spliced {
					out = spliceResultType(t, out)
				}
				if err := schema.validate("#/$defs/"+tc.typ, out); err != nil {
					t.Errorf("encoding is not a valid %s: %v\n%s", tc.typ, err, out)
				}
			})
		}
	}
}

// spliceResultType adds resultType "complete" to a result object, as the
// modern leg does.
func spliceResultType(t *testing.T, out []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	m[resultTypeMember] = json.RawMessage(`"complete"`)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExamples2026Messages decodes the example requests, notifications,
// responses and errors of revision 2026-07-28: their _meta into
// RequestMeta, their params, results and error data into the Go types.
func TestExamples2026Messages(t *testing.T) {
	decode := func(t *testing.T, file string) jsonrpc.Message {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := jsonrpc.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return msg
	}
	requestMeta := func(t *testing.T, params json.RawMessage) RequestMeta {
		t.Helper()
		var p struct {
			Meta RequestMeta `json:"_meta"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Meta.ProtocolVersion != ProtocolVersion20260728 || p.Meta.ClientCapabilities == nil {
			t.Fatalf("_meta = %+v, want version %s and capabilities", p.Meta, ProtocolVersion20260728)
		}
		if p.Meta.ClientInfo == nil || p.Meta.ClientInfo.Validate() != nil {
			t.Fatalf("clientInfo = %+v", p.Meta.ClientInfo)
		}
		return p.Meta
	}
	for _, typ := range []string{"DiscoverRequest", "ListToolsRequest", "CallToolRequest", "SubscriptionsListenRequest"} {
		for _, file := range examples2026(t, typ) {
			t.Run(typ+"/"+filepath.Base(file), func(t *testing.T) {
				req, ok := decode(t, file).(*jsonrpc.Request)
				if !ok || !req.ID.IsValid() {
					t.Fatalf("not a request: %s", file)
				}
				requestMeta(t, req.Params)
				if typ == "SubscriptionsListenRequest" {
					var p SubscriptionsListenRequestParams
					if err := json.Unmarshal(req.Params, &p); err != nil {
						t.Fatal(err)
					}
					if err := p.Validate(); err != nil {
						t.Fatal(err)
					}
					if !p.Notifications.ToolsListChanged || len(p.Notifications.ResourceSubscriptions) != 1 {
						t.Fatalf("filter = %+v", p.Notifications)
					}
				}
			})
		}
	}
	t.Run("SubscriptionsAcknowledgedNotification", func(t *testing.T) {
		for _, file := range examples2026(t, "SubscriptionsAcknowledgedNotification") {
			n, ok := decode(t, file).(*jsonrpc.Request)
			if !ok || n.ID.IsValid() || n.Method != NotificationSubscriptionsAcknowledged {
				t.Fatalf("not the acknowledgement: %s", file)
			}
			var p SubscriptionsAcknowledgedNotificationParams
			if err := json.Unmarshal(n.Params, &p); err != nil {
				t.Fatal(err)
			}
			if id, ok := p.Meta.SubscriptionID(); !ok || id != jsonrpc.StringID("listen-1") {
				t.Fatalf("subscription id = %v, %v", id, ok)
			}
			out, _ := json.Marshal(&p)
			if !sameJSON2026(t, n.Params, out) {
				t.Fatalf("round trip: %s vs %s", n.Params, out)
			}
		}
	})
	for _, tc := range []struct {
		typ  string
		into func() any
	}{
		{"DiscoverResultResponse", func() any { return new(DiscoverResult) }},
		{"SubscriptionsListenResultResponse", func() any { return new(SubscriptionsListenResult) }},
		{"ListToolsResultResponse", func() any { return new(ListToolsResult) }},
		{"ReadResourceResultResponse", func() any { return new(ReadResourceResult) }},
	} {
		for _, file := range examples2026(t, tc.typ) {
			t.Run(tc.typ+"/"+filepath.Base(file), func(t *testing.T) {
				resp, ok := decode(t, file).(*jsonrpc.Response)
				if !ok || resp.Error != nil {
					t.Fatalf("not a result: %s", file)
				}
				v := tc.into()
				if err := json.Unmarshal(resp.Result, v); err != nil {
					t.Fatal(err)
				}
				out, _ := json.Marshal(v)
				if !sameJSON2026(t, resp.Result, out, resultTypeMember) {
					t.Fatalf("round trip lost something:\n in: %s\nout: %s", resp.Result, out)
				}
			})
		}
	}
	errorTests := []struct {
		typ  string
		code int64
		data any
	}{
		{"UnsupportedProtocolVersionError", CodeUnsupportedProtocolVersion, &UnsupportedProtocolVersionData{Supported: []string{"2026-07-28", "2025-11-25"}, Requested: "1900-01-01"}},
		{"MissingRequiredClientCapabilityError", CodeMissingRequiredClientCapability, &MissingRequiredClientCapabilityData{RequiredCapabilities: ClientCapabilities{Elicitation: &ElicitationCapability{}}}},
		{"HeaderMismatchError", CodeHeaderMismatch, nil},
	}
	for _, tc := range errorTests {
		for _, file := range examples2026(t, tc.typ) {
			t.Run(tc.typ, func(t *testing.T) {
				resp, ok := decode(t, file).(*jsonrpc.Response)
				if !ok || resp.Error == nil {
					t.Fatalf("not an error: %s", file)
				}
				if resp.Error.Code != tc.code {
					t.Fatalf("code = %d, want %d", resp.Error.Code, tc.code)
				}
				if tc.data == nil {
					return
				}
				got := reflect.New(reflect.TypeOf(tc.data).Elem()).Interface()
				if err := json.Unmarshal(resp.Error.Data, got); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.data) {
					t.Fatalf("data = %+v, want %+v", got, tc.data)
				}
			})
		}
	}
}

func TestProtocolVersions2026(t *testing.T) {
	if !IsModernProtocolVersion(ProtocolVersion20260728) || IsModernProtocolVersion(ProtocolVersion20251125) {
		t.Fatal("IsModernProtocolVersion")
	}
	if IsSupportedProtocolVersion(ProtocolVersion20260728) {
		t.Fatal("2026-07-28 must not be offered in initialize")
	}
	all := AllProtocolVersions()
	if all[0] != ProtocolVersion20260728 || all[1] != ProtocolVersion20251125 {
		t.Fatalf("AllProtocolVersions = %v", all)
	}
}

func TestCapabilityExtensionsValidate(t *testing.T) {
	for _, tc := range []struct {
		ext  string
		ok   bool
		json string
	}{
		{"io.modelcontextprotocol/tasks", true, `{}`},
		{"com.example/x", true, `{"a":1}`},
		{"tasks", false, `{}`},
		{"io.modelcontextprotocol/tasks", false, `[]`},
		{"-bad/x", false, `{}`},
	} {
		c := ClientCapabilities{Extensions: map[string]json.RawMessage{tc.ext: json.RawMessage(tc.json)}}
		s := ServerCapabilities{Extensions: c.Extensions}
		if (c.Validate() == nil) != tc.ok || (s.Validate() == nil) != tc.ok {
			t.Errorf("%s %s: client %v server %v, want ok=%v", tc.ext, tc.json, c.Validate(), s.Validate(), tc.ok)
		}
	}
}
