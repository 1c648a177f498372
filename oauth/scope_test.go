package oauth

import (
	"reflect"
	"testing"
)

func TestParseScope(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"a", []string{"a"}},
		{"a b", []string{"a", "b"}},
		{"  a   b  ", []string{"a", "b"}},
		{"files:read files:write", []string{"files:read", "files:write"}},
		{"a\tb", []string{"a\tb"}},
		{"b a b", []string{"b", "a", "b"}},
	}
	for _, tt := range tests {
		if got := ParseScope(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseScope(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestJoinScope(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a b"},
		{[]string{"", "a", "", "b", ""}, "a b"},
	}
	for _, tt := range tests {
		if got := JoinScope(tt.in); got != tt.want {
			t.Errorf("JoinScope(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := JoinScope(ParseScope(tt.want)); got != tt.want {
			t.Errorf("JoinScope(ParseScope(%q)) = %q", tt.want, got)
		}
	}
}

func TestMergeScopes(t *testing.T) {
	tests := []struct {
		a, b, want []string
	}{
		{nil, nil, nil},
		{[]string{"a"}, nil, []string{"a"}},
		{nil, []string{"b"}, []string{"b"}},
		{[]string{"a", "b"}, []string{"b", "c"}, []string{"a", "b", "c"}},
		{[]string{"b", "a", "b"}, []string{"c", "a", "c"}, []string{"b", "a", "c"}},
		{[]string{"", "a"}, []string{"", "A"}, []string{"a", "A"}},
		{[]string{""}, []string{""}, nil},
	}
	for _, tt := range tests {
		if got := MergeScopes(tt.a, tt.b); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("MergeScopes(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
	a := []string{"x", "y"}
	_ = MergeScopes(a, []string{"z"})
	if !reflect.DeepEqual(a, []string{"x", "y"}) {
		t.Errorf("MergeScopes modified its input: %q", a)
	}
}

func TestHasAllScopes(t *testing.T) {
	tests := []struct {
		granted, required []string
		want              bool
	}{
		{nil, nil, true},
		{[]string{"a"}, nil, true},
		{nil, []string{"a"}, false},
		{[]string{"a", "b"}, []string{"b"}, true},
		{[]string{"a", "b"}, []string{"b", "a", "b"}, true},
		{[]string{"a"}, []string{"a", "c"}, false},
		{[]string{"a"}, []string{"A"}, false},
		{[]string{"a"}, []string{"", "a"}, true},
	}
	for _, tt := range tests {
		if got := HasAllScopes(tt.granted, tt.required); got != tt.want {
			t.Errorf("HasAllScopes(%q, %q) = %v, want %v", tt.granted, tt.required, got, tt.want)
		}
	}
}
