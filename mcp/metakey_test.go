package mcp

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// metaLabelRe matches one prefix label of the _meta key grammar.
const metaLabelRe = `[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?`

// The oracle: the _meta key grammar written as regular expressions.
var (
	metaKeyOracle  = regexp.MustCompile(`^(?:` + metaLabelRe + `(?:\.` + metaLabelRe + `)*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$`)
	reservedOracle = regexp.MustCompile(`^` + metaLabelRe + `\.(?i:modelcontextprotocol|mcp)(?:\.` + metaLabelRe + `)*$`)
)

func oracleValid(key string) bool { return metaKeyOracle.MatchString(key) }

func oracleReserved(key string) bool {
	i := strings.IndexByte(key, '/')
	return i >= 0 && reservedOracle.MatchString(key[:i])
}

func TestValidMetaKey(t *testing.T) {
	tests := []struct {
		key    string
		valid  bool
		reason string // part of the reason, for invalid keys
	}{
		{"progressToken", true, ""},
		{"io.modelcontextprotocol/related-task", true, ""},
		{"io.modelcontextprotocol/model-immediate-response", true, ""},
		{"com.example/my_key.v2", true, ""},
		{"com.example/", true, ""},
		{"a/", true, ""},
		{"a/b", true, ""},
		{"x", true, ""},
		{"7", true, ""},
		{"a1-b/c", true, ""},
		{"A.B-C.d9/Name_1.x-Y", true, ""},
		{"COM.EXAMPLE/KEY", true, ""},
		{"a.b.c.d.e.f/g", true, ""},
		{"x1.y2/3z", true, ""},
		{"a-b", true, ""},
		{"a_b.c", true, ""},
		{"0", true, ""},

		{"", true, ""},
		{"/", false, "prefix before '/' is empty"},
		{"/x", false, "prefix before '/' is empty"},
		{"a/b/c", false, "more than one '/'"},
		{"a//b", false, "more than one '/'"},
		{"com.example//", false, "more than one '/'"},
		{"a..b/x", false, "label 2 is empty"},
		{".a/x", false, "label 1 is empty"},
		{"a./x", false, "label 2 is empty"},
		{"1a/x", false, "must start with a letter"},
		{"-a/x", false, "must start with a letter"},
		{"a-/x", false, "must end with a letter or digit"},
		{"com.ex-/x", false, "must end with a letter or digit"},
		{"a_b/x", false, "labels hold only"},
		{"a b/x", false, "labels hold only"},
		{"exämple.com/x", false, "labels hold only"},
		{"é.com/x", false, "must start with a letter"},
		{"com.example/ä", false, "name must start"},
		{"com.example/aä", false, "name has 'ä'"},
		{"-x", false, "name must start"},
		{"x-", false, "name must end"},
		{"_x", false, "name must start"},
		{"x_", false, "name must end"},
		{".x", false, "name must start"},
		{"x.", false, "name must end"},
		{"a b", false, "name has ' '"},
		{"a:b", false, "name has ':'"},
		{"com.example/-", false, "name must start"},
		{"com.example/x ", false, "name has ' '"},
		{"\x00", false, "name must start"},
		{"a\xffb", false, "name has"},
	}
	for _, tt := range tests {
		err := ValidMetaKey(tt.key)
		if (err == nil) != tt.valid {
			t.Errorf("ValidMetaKey(%q) = %v, want valid=%v", tt.key, err, tt.valid)
			continue
		}
		if oracleValid(tt.key) != tt.valid {
			t.Errorf("oracle disagrees with the table on %q", tt.key)
		}
		if err == nil {
			continue
		}
		var mke *MetaKeyError
		if !errors.As(err, &mke) || mke.Key != tt.key {
			t.Errorf("ValidMetaKey(%q) = %#v, want a *MetaKeyError for the key", tt.key, err)
			continue
		}
		if !strings.Contains(mke.Reason, tt.reason) {
			t.Errorf("ValidMetaKey(%q) reason %q, want it to mention %q", tt.key, mke.Reason, tt.reason)
		}
		if !strings.Contains(err.Error(), mke.Reason) {
			t.Errorf("Error() = %q lacks the reason", err.Error())
		}
	}
}

func TestReservedMetaPrefix(t *testing.T) {
	tests := []struct {
		prefix string
		want   bool
	}{
		{"io.modelcontextprotocol/", true},
		{"io.modelcontextprotocol", true},
		{"dev.mcp/", true},
		{"io.mcp.x/", true},
		{"a.mcp.b.c/", true},
		{"io.MCP/", true},
		{"io.ModelContextProtocol/", true},
		{"com.example.mcp/", false},
		{"mcp/", false},
		{"modelcontextprotocol.io/", false},
		{"com.example/", false},
		{"io.mcpx/", false},
		{"io.mc/", false},
		{"io.mcp-x/", false},
		{"", false},
		{"/", false},
		{"io..mcp/", false},
		{"1o.mcp/", false},
		{"io.mcp//", false},
	}
	for _, tt := range tests {
		if got := IsReservedMetaPrefix(tt.prefix); got != tt.want {
			t.Errorf("IsReservedMetaPrefix(%q) = %v, want %v", tt.prefix, got, tt.want)
		}
	}
	keys := []struct {
		key  string
		want bool
	}{
		{MetaKeyRelatedTask, true},
		{MetaKeyModelImmediateResponse, true},
		{"dev.mcp/x", true},
		{"io.mcp.tools/", true},
		{MetaKeyProgressToken, false},
		{"com.example.mcp/x", false},
		{"com.example/x", false},
		{"mcp", false},
		{"io..mcp/x", false},
	}
	for _, tt := range keys {
		if got := MetaKeyReserved(tt.key); got != tt.want {
			t.Errorf("MetaKeyReserved(%q) = %v, want %v", tt.key, got, tt.want)
		}
		if oracleReserved(tt.key) != tt.want {
			t.Errorf("oracle disagrees on reserved %q", tt.key)
		}
	}
}

func TestValidateMeta(t *testing.T) {
	if err := ValidateMeta(nil); err != nil {
		t.Errorf("nil: %v", err)
	}
	good := Meta{MetaKeyProgressToken: 1, MetaKeyRelatedTask: RelatedTaskMetadata{TaskID: "t"}, "com.example/x": true}
	if err := ValidateMeta(good); err != nil {
		t.Errorf("valid keys: %v", err)
	}
	bad := Meta{"ok": 1, "z z": 1, "b/c/d": 1, "-a": 1, "com.example/fine": 1}
	for range 20 { // map order varies; the answer must not
		err := ValidateMeta(bad)
		var mke *MetaKeyError
		if !errors.As(err, &mke) || mke.Key != "-a" {
			t.Fatalf("ValidateMeta = %v, want the error for %q", err, "-a")
		}
	}
}

func FuzzValidMetaKey(f *testing.F) {
	for _, s := range []string{
		"", "/", "a", "a/", "a/b", "a.b/c", "io.modelcontextprotocol/related-task", "progressToken",
		"a..b/x", ".a/x", "-a/x", "a-/x", "1a/x", "a/b/c", "x-", "_x", "a.b-c.d/e_f.g", "é/x", "com.example/",
		"io.MCP/x", "dev.mcp/", "com.example.mcp/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := ValidMetaKey(key)
		if want := oracleValid(key); (err == nil) != want {
			t.Fatalf("ValidMetaKey(%q) = %v, oracle says valid=%v", key, err, want)
		}
		if err != nil {
			var mke *MetaKeyError
			if !errors.As(err, &mke) || mke.Key != key || mke.Reason == "" {
				t.Fatalf("ValidMetaKey(%q) = %#v", key, err)
			}
		}
		if got, want := MetaKeyReserved(key), oracleReserved(key); got != want {
			t.Fatalf("MetaKeyReserved(%q) = %v, oracle says %v", key, got, want)
		}
		if i := strings.IndexByte(key, '/'); i >= 0 {
			if got, want := IsReservedMetaPrefix(key[:i+1]), reservedOracle.MatchString(key[:i]); got != want {
				t.Fatalf("IsReservedMetaPrefix(%q) = %v, oracle says %v", key[:i+1], got, want)
			}
		}
	})
}

func BenchmarkValidMetaKey(b *testing.B) {
	keys := []string{
		MetaKeyProgressToken,
		MetaKeyRelatedTask,
		"com.example.tools.v2/cache-control_hint.x",
		"a..b/x",
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range keys[:3] {
			if ValidMetaKey(k) != nil {
				b.Fatal(k)
			}
		}
	}
}

func BenchmarkValidMetaKeyRegexp(b *testing.B) {
	keys := []string{MetaKeyProgressToken, MetaKeyRelatedTask, "com.example.tools.v2/cache-control_hint.x"}
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range keys {
			if !oracleValid(k) {
				b.Fatal(k)
			}
		}
	}
}

func BenchmarkValidateMeta(b *testing.B) {
	m := Meta{MetaKeyProgressToken: 1, MetaKeyRelatedTask: nil, "com.example/a": 1, "com.example/b": 2}
	b.ReportAllocs()
	for b.Loop() {
		if ValidateMeta(m) != nil {
			b.Fatal("invalid")
		}
	}
}

// TestMetaKeyGrammarFromSpec follows the rows of the _meta key table of the
// specification ("Key name = optional prefix + name"), one group of keys
// per rule (issue #16 item 16: the empty name, with or without a prefix,
// is a key).
func TestMetaKeyGrammarFromSpec(t *testing.T) {
	for _, row := range []struct {
		rule    string
		valid   []string
		invalid []string
	}{
		{"the prefix is optional", []string{"x", "progressToken", "a-b_c.d"}, nil},
		{"a prefix is labels separated by '.', followed by '/'", []string{"a/x", "a.b/x", "a.b.c/x"}, []string{"/x", ".a/x", "a./x", "a..b/x", "a/b/c"}},
		{"a label starts with a letter", []string{"Ab/x"}, []string{"1a/x", "-a/x", "_a/x"}},
		{"a label ends with a letter or digit", []string{"a1/x", "ab/x"}, []string{"a-/x"}},
		{"a label holds letters, digits and hyphens inside", []string{"a-1-b/x"}, []string{"a_b/x", "a b/x", "aé/x"}},
		{"a name may be empty", []string{"", "a/", "com.example/", "io.modelcontextprotocol/"}, []string{"/"}},
		{"a name, unless empty, begins and ends alphanumeric", []string{"0", "a", "a.b", "a_b", "a-b"}, []string{"-a", "a-", ".a", "a.", "_a", "a_", "com.example/-"}},
		{"a name holds hyphens, underscores, dots and alphanumerics between", []string{"a-_.9"}, []string{"a b", "a:b", "a/b/c", "aäb"}},
	} {
		for _, k := range row.valid {
			if err := ValidMetaKey(k); err != nil {
				t.Errorf("%s: %q: %v", row.rule, k, err)
			}
		}
		for _, k := range row.invalid {
			if ValidMetaKey(k) == nil {
				t.Errorf("%s: %q accepted", row.rule, k)
			}
		}
	}
}

// TestEmptyMetaKeysOnTheWire: a request whose _meta holds the empty key
// and a prefix with an empty name is served by a server that checks keys.
func TestEmptyMetaKeysOnTheWire(t *testing.T) {
	h, sid, ran := strictServerHandler(t, &ServerOptions{StrictMeta: true})
	w := directPost(h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"":1,"com.example/":2}}}`, sid)
	if !strings.Contains(w.buf.String(), `"result"`) || len(*ran) != 1 {
		t.Fatalf("%s", w.buf.String())
	}
}
