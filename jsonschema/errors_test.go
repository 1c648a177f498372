package jsonschema

import (
	"errors"
	"io"
	"testing"
)

func TestErrorsMatchTheirSentinelOnly(t *testing.T) {
	sentinels := []error{ErrUnsupportedDialect, ErrInvalidSchema, ErrRemoteRef, ErrValidation, ErrInvalidJSON}
	tests := []struct {
		err  error
		want error
	}{
		{&UnsupportedDialectError{URI: "x"}, ErrUnsupportedDialect},
		{&InvalidSchemaError{Issues: []Issue{{"/type", "bad"}}}, ErrInvalidSchema},
		{&RemoteRefError{URL: "http://127.0.0.1/x"}, ErrRemoteRef},
		{&ValidationError{Issues: []Issue{{"", "bad"}}}, ErrValidation},
	}
	for _, tt := range tests {
		for _, s := range sentinels {
			if got := errors.Is(tt.err, s); got != (s == tt.want) {
				t.Errorf("errors.Is(%T, %v) = %v", tt.err, s, got)
			}
		}
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&UnsupportedDialectError{URI: "https://example.com/d"},
			`jsonschema: unsupported JSON Schema dialect "https://example.com/d" (supported: 2020-12, 2019-09, draft-07, draft-06, draft-04)`},
		{&InvalidSchemaError{Issues: []Issue{{"/type", "must be string"}, {"", "must be object"}}},
			`jsonschema: invalid schema: /type: must be string; (root): must be object`},
		{&InvalidSchemaError{Err: io.ErrUnexpectedEOF},
			`jsonschema: invalid schema: unexpected EOF`},
		{&InvalidSchemaError{Issues: []Issue{{"/a", "x"}}, Err: io.ErrUnexpectedEOF},
			`jsonschema: invalid schema: /a: x; unexpected EOF`},
		{&InvalidSchemaError{}, `jsonschema: invalid schema`},
		{&RemoteRefError{URL: "file:///etc/passwd"},
			`jsonschema: reference to "file:///etc/passwd" not allowed: only local references, bundled meta-schemas and registered resources resolve (no network or file access)`},
		{&ValidationError{Issues: []Issue{{"/age", "must be >= 0"}}},
			`jsonschema: validation failed: /age: must be >= 0`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%T.Error()\n got %s\nwant %s", tt.err, got, tt.want)
		}
	}
}

func TestInvalidSchemaErrorUnwrap(t *testing.T) {
	err := error(&InvalidSchemaError{Err: io.ErrUnexpectedEOF})
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("errors.Is through InvalidSchemaError failed: %v", err)
	}
}

func TestIssueString(t *testing.T) {
	tests := []struct {
		issue Issue
		want  string
	}{
		{Issue{"", "must be object"}, "(root): must be object"},
		{Issue{"/a/0", "must be >= 1"}, "/a/0: must be >= 1"},
		{Issue{"/", "empty key"}, "/: empty key"},
	}
	for _, tt := range tests {
		if got := tt.issue.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestHelpers(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"short", "short"},
		{"0123456789", "0123456789"},
		{"01234567890", "0123456..."},
		{"012345€€", "012345..."}, // never splits a rune
	} {
		if got := truncate(tt.in, 10); got != tt.want {
			t.Errorf("truncate(%q, 10) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		tokens []string
		want   string
	}{
		{nil, ""},
		{[]string{"a", "0"}, "/a/0"},
		{[]string{"a/b", "c~d", ""}, "/a~1b/c~0d/"},
	} {
		if got := pointer(tt.tokens); got != tt.want {
			t.Errorf("pointer(%q) = %q, want %q", tt.tokens, got, tt.want)
		}
	}
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "item", "1 item"}, {0, "item", "0 items"}, {2, "property", "2 properties"}, {1, "property", "1 property"},
	} {
		if got := count(tt.n, tt.noun); got != tt.want {
			t.Errorf("count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}
