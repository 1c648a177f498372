package mcp

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestElicitationDefaultsRoundTrip accepts a form without touching it, for
// every kind of field, with and without a default: the client fills in the
// defaults, checks them and sends them; the server gets each default back
// in the form it decodes values (string, float64, bool, []string), and no
// value for a field without a default (issue #16 item 15).
func TestElicitationDefaultsRoundTrip(t *testing.T) {
	num, integer, yes := 2.5, 7.0, true
	tests := []struct {
		name  string
		field PrimitiveSchemaDefinition
		want  any // nil: absent
	}{
		{"string", &StringSchema{}, nil},
		{"string default", &StringSchema{Default: "London"}, "London"},
		{"number", &NumberSchema{}, nil},
		{"number default", &NumberSchema{Default: &num}, 2.5},
		{"integer default", &NumberSchema{Type: "integer", Default: &integer}, 7.0},
		{"boolean", &BooleanSchema{}, nil},
		{"boolean default", &BooleanSchema{Default: &yes}, true},
		{"single select", &UntitledSingleSelectEnumSchema{Enum: []string{"a", "b"}}, nil},
		{"single select default", &UntitledSingleSelectEnumSchema{Enum: []string{"a", "b"}, Default: "b"}, "b"},
		{"titled single select", &TitledSingleSelectEnumSchema{OneOf: []EnumOption{{"a", "A"}, {"b", "B"}}}, nil},
		{"titled single select default", &TitledSingleSelectEnumSchema{OneOf: []EnumOption{{"a", "A"}, {"b", "B"}}, Default: "a"}, "a"},
		{"legacy titled", &LegacyTitledEnumSchema{Enum: []string{"a", "b"}, EnumNames: []string{"A", "B"}}, nil},
		{"legacy titled default", &LegacyTitledEnumSchema{Enum: []string{"a", "b"}, EnumNames: []string{"A", "B"}, Default: "b"}, "b"},
		{"multi select", &UntitledMultiSelectEnumSchema{Items: UntitledEnumItems{Enum: []string{"a", "b", "c"}}}, nil},
		{"multi select default", &UntitledMultiSelectEnumSchema{Items: UntitledEnumItems{Enum: []string{"a", "b", "c"}}, Default: []string{"a", "c"}}, []string{"a", "c"}},
		{"multi select empty default", &UntitledMultiSelectEnumSchema{Items: UntitledEnumItems{Enum: []string{"a"}}, Default: []string{}}, nil},
		{"titled multi select", &TitledMultiSelectEnumSchema{Items: TitledEnumItems{AnyOf: []EnumOption{{"a", "A"}, {"b", "B"}}}}, nil},
		{"titled multi select default", &TitledMultiSelectEnumSchema{Items: TitledEnumItems{AnyOf: []EnumOption{{"a", "A"}, {"b", "B"}}}, Default: []string{"b"}}, []string{"b"}},
	}
	for _, tc := range featureTransports {
		t.Run(tc.name, func(t *testing.T) {
			c := testClient(&ClientOptions{
				ElicitationHandler: func(ctx context.Context, cs *ClientSession, p ElicitRequestParams) (*ElicitResult, error) {
					return &ElicitResult{Action: ElicitActionAccept}, nil
				},
			})
			var ss *ServerSession
			s := testServer(nil)
			s.AddTool(&Tool{Name: "ask", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, sess *ServerSession, p *CallToolRequestParams) (*CallToolResult, error) {
				ss = sess
				return &CallToolResult{}, nil
			})
			cs := tc.connect(t, s, c)
			if _, err := cs.CallTool(context.Background(), &CallToolRequestParams{Name: "ask"}); err != nil {
				t.Fatal(err)
			}
			for _, tt := range tests {
				res, err := ss.Elicit(context.Background(), &ElicitRequestFormParams{Message: "fill in", RequestedSchema: RequestedSchema{
					Properties: map[string]PrimitiveSchemaDefinition{"f": tt.field},
				}})
				if err != nil {
					t.Errorf("%s: %v", tt.name, err)
					continue
				}
				got, ok := res.Content["f"]
				if tt.want == nil {
					if ok && !(reflect.DeepEqual(got, []string{}) && tt.name == "multi select empty default") {
						t.Errorf("%s: content %#v, want no value", tt.name, got)
					}
					continue
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: content %#v, want %#v", tt.name, got, tt.want)
				}
			}
		})
	}
}

// TestElicitResultValidateArrays checks the content value kinds, and that
// the errors say them in JSON terms.
func TestElicitResultValidateArrays(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string // "" for valid
	}{
		{[]string{"a"}, ""},
		{[]any{"a", "b"}, ""},
		{[]any{}, ""},
		{[]any{"a", 1.0}, "an array must hold only strings"},
		{map[string]any{}, "must be a string, a number, a boolean or an array of strings"},
		{struct{}{}, "must be a string, a number, a boolean or an array of strings"},
	} {
		err := (&ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"f": tc.v}}).Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%#v: %v", tc.v, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%#v: %v, want %q", tc.v, err, tc.want)
		case err != nil && (strings.Contains(err.Error(), "map[") || strings.Contains(err.Error(), "struct")):
			t.Errorf("%#v: %v names a Go type", tc.v, err)
		}
	}
}
