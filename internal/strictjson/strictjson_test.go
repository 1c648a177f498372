package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Name string  `json:"name"`
	URI  *string `json:"uri,omitempty"`
	Type string  `json:"type"`
}

type embedded struct {
	Cursor string `json:"cursor,omitempty"`
}

type outer struct {
	embedded
	Name  string           `json:"name"`
	Ref   *inner           `json:"ref,omitempty"`
	List  []inner          `json:"list,omitempty"`
	M     map[string]inner `json:"m,omitempty"`
	Any   any              `json:"any,omitempty"`
	Raw   json.RawMessage  `json:"raw,omitempty"`
	Count int              `json:"count,string,omitempty"`
	Plain string           // no tag: named Plain
	Self  *outer           `json:"self,omitempty"`
}

func TestUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    outer
		wantDup string
	}{
		{in: `{"name":"a"}`, want: outer{Name: "a"}},
		{in: `{"Name":"a"}`, want: outer{}},
		{in: `{"NAME":"a"}`, want: outer{}},
		{in: `{"nAme":"a"}`, want: outer{}},
		{in: `{"name":"echo","NAME":"fetch"}`, want: outer{Name: "echo"}},
		{in: `{"NAME":"fetch","name":"echo"}`, want: outer{Name: "echo"}},
		{in: `{"name":null,"Name":"fetch"}`, want: outer{}},
		{in: `{"n\u0061me":"a"}`, want: outer{Name: "a"}},
		{in: `{"N\u0061me":"a"}`, want: outer{}},
		{in: "{\"name\":\"a\",\"nam\u212a\":\"b\"}", want: outer{Name: "a"}}, // no fold: 'e' is not 'K'
		{in: `{"plain":"x"}`, want: outer{}},
		{in: `{"Plain":"x"}`, want: outer{Plain: "x"}},
		{in: `{"CURSOR":"x","cursor":"y"}`, want: outer{embedded: embedded{Cursor: "y"}}},
		{in: `{"ref":{"Name":"x","name":"y","TYPE":"z"}}`, want: outer{Ref: &inner{Name: "y"}}},
		{in: `{"list":[{"NAME":"x"},{"name":"y"}]}`, want: outer{List: []inner{{}, {Name: "y"}}}},
		{in: `{"m":{"Name":{"NAME":"x","name":"z"}}}`, want: outer{M: map[string]inner{"Name": {Name: "z"}}}},
		{in: `{"self":{"self":{"Name":"x"}}}`, want: outer{Self: &outer{Self: &outer{}}}},
		{in: `{"any":{"Name":"x"},"raw":{"Name":1}}`, want: outer{Any: map[string]any{"Name": "x"}, Raw: json.RawMessage(`{"Name":1}`)}},
		{in: `{"count":"12","COUNT":"13"}`, want: outer{Count: 12}},
		{in: `{"name":"a","name":"b"}`, wantDup: "name"},
		{in: `{"name":"a","n\u0061me":"b"}`, wantDup: "name"},
		{in: `{"name":null,"name":"b"}`, wantDup: "name"},
		{in: `{"ref":{"uri":"a","uri":"b"}}`, wantDup: "uri"},
		{in: `{"list":[{},{"type":"a","type":"a"}]}`, wantDup: "type"},
		{in: `{"cursor":"a","cursor":"b"}`, wantDup: "cursor"},
		{in: `{"any":{"a":1,"a":2},"raw":{"b":1,"b":2}}`, want: outer{Any: map[string]any{"a": 2.0}, Raw: json.RawMessage(`{"b":1,"b":2}`)}},
	} {
		var got outer
		err := Unmarshal([]byte(tc.in), &got)
		if tc.wantDup != "" {
			var de *DuplicateMemberError
			if !errors.As(err, &de) || de.Name != tc.wantDup || !errors.Is(err, ErrDuplicateMember) {
				t.Errorf("%s: err = %v, want a duplicate %q", tc.in, err, tc.wantDup)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.in, got, tc.want)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"name":}`, `{"name":"a"} x`, `{"name":1}`, `[`, `{"ref":[}`, strings.Repeat(`{"self":`, MaxDepth+1)} {
		var v outer
		if err := Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("%.40q: no error", in)
		}
	}
	var v outer
	if err := Unmarshal([]byte(`{}`), v); err == nil {
		t.Error("a non-pointer: no error")
	}
}

// TestUnmarshalNoAlloc checks that input needing no rewriting costs
// nothing more than encoding/json's own decoding.
func TestUnmarshalNoAlloc(t *testing.T) {
	in := []byte(`{"name":"a","ref":{"name":"b","type":"c"},"list":[{"name":"d"}],"unknown":{"x":[1,2]}}`)
	type flat struct {
		Name string `json:"name"`
	}
	small := []byte(`{"name":"a","other":1}`)
	var v flat
	base := testing.AllocsPerRun(100, func() { _ = json.Unmarshal(small, &v) })
	strict := testing.AllocsPerRun(100, func() { _ = Unmarshal(small, &v) })
	if strict > base {
		t.Errorf("Unmarshal allocates %v times, encoding/json %v", strict, base)
	}
	var o outer
	base = testing.AllocsPerRun(100, func() { o = outer{}; _ = json.Unmarshal(in, &o) })
	strict = testing.AllocsPerRun(100, func() { o = outer{}; _ = Unmarshal(in, &o) })
	if strict > base {
		t.Errorf("Unmarshal allocates %v times, encoding/json %v", strict, base)
	}
}

// FuzzUnmarshal compares Unmarshal with an independent model: the input
// read token by token (so that repeated members are seen), members that
// match a field only case-insensitively (strings.EqualFold) dropped, then
// decoded by encoding/json.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","NAME":"b"}`, `{"Name":"x"}`, `{"ref":{"URI":"u","uri":"v"}}`,
		`{"list":[{"Type":"t"}],"m":{"k":{"name":"n","Name":"N"}}}`,
		`{"self":{"name":"a","name":"b"}}`, `{"count":"1","Count":"2"}`, "{\"nam\u212a\":1}",
		`{"any":{"Name":1},"raw":[1,{"NAME":2}]}`, `{"cursor":"c","CURSOR":"d","Plain":"p","plain":"q"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got outer
		err := Unmarshal(data, &got)
		tree, ok := readTree(data)
		if !ok {
			if err == nil {
				t.Fatalf("%q: invalid JSON accepted", data)
			}
			return
		}
		model, dup := modelOf(tree, reflect.TypeFor[outer]())
		if dup {
			if !errors.Is(err, ErrDuplicateMember) {
				t.Fatalf("%q: a repeated member: err = %v", data, err)
			}
			return
		}
		b, merr := json.Marshal(model)
		if merr != nil {
			t.Fatal(merr)
		}
		var want outer
		werr := json.Unmarshal(b, &want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: err = %v, model's %v (model %s)", data, err, werr, b)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
		}
	})
}

// member and object keep a JSON object's members in order, repeats
// included.
type member struct {
	key string
	val any
}

type object []member

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// readTree reads data with encoding/json's tokenizer into objects, []any
// and json.Number and other scalars.
func readTree(data []byte) (any, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := readValue(d)
	if err != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

func readValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := readValue(d)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k.(string), v})
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := readValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}

// modelOf drops from v, read into type t, the members that match a field
// of a struct only case-insensitively, and reports a field given twice.
func modelOf(v any, t reflect.Type) (any, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() || t.Kind() == reflect.Interface {
		return v, false
	}
	switch v := v.(type) {
	case object:
		out := object{}
		if t.Kind() == reflect.Map {
			for _, m := range v {
				mv, dup := modelOf(m.val, t.Elem())
				if dup {
					return nil, true
				}
				out = append(out, member{m.key, mv})
			}
			return out, false
		}
		if t.Kind() != reflect.Struct {
			return v, false
		}
		fields := jsonFields(t)
		seen := map[string]bool{}
		for _, m := range v {
			ft, exact := fields[m.key]
			if !exact {
				folded := false
				for name := range fields {
					if strings.EqualFold(name, m.key) {
						folded = true
					}
				}
				if !folded {
					out = append(out, m)
				}
				continue
			}
			if seen[m.key] {
				return nil, true
			}
			seen[m.key] = true
			mv, dup := modelOf(m.val, ft)
			if dup {
				return nil, true
			}
			out = append(out, member{m.key, mv})
		}
		return out, false
	case []any:
		if t.Kind() != reflect.Slice {
			return v, false
		}
		out := []any{}
		for _, e := range v {
			ev, dup := modelOf(e, t.Elem())
			if dup {
				return nil, true
			}
			out = append(out, ev)
		}
		return out, false
	}
	return v, false
}

// jsonFields lists the JSON names of struct t's fields (with embedded
// ones) and their types; a ",string" field maps to string.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
		if strings.Contains(opts, "string") {
			out[name] = reflect.TypeFor[string]()
		}
	}
	return out
}

// TestDescribe checks that decoding errors name JSON types, never Go ones.
func TestDescribe(t *testing.T) {
	type meta struct {
		Meta map[string]any `json:"_meta"`
	}
	for _, tc := range []struct {
		in   string
		v    any
		want string
	}{
		{`{"name":1}`, new(outer), "name must be a string, not a number"},
		{`{"ref":{"name":true}}`, new(outer), "ref.name must be a string, not a boolean"},
		{`{"list":{}}`, new(outer), "list must be an array, not an object"},
		{`{"_meta":"x"}`, new(meta), "_meta must be an object, not a string"},
		{`"x"`, new(map[string]any), "must be an object, not a string"},
		{`{"count":"x"}`, new(outer), "a member has the wrong type"},
		{`{"n":300}`, new(struct {
			N uint8 `json:"n"`
		}), "n must be an integer within range, not the number 300"},
		{`{"name":"a","name":"b"}`, new(outer), `member "name" appears more than once`},
		{`{`, new(outer), "unexpected end of JSON input"},
	} {
		err := Unmarshal([]byte(tc.in), tc.v)
		if err == nil {
			t.Errorf("%s: no error", tc.in)
			continue
		}
		got := Describe(err)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q (from %v)", tc.in, got, tc.want, err)
		}
		for _, leak := range []string{"Go ", "interface {}", "map[", "[]", "strictjson.", "uint8", "int64", "float64"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: %q names a Go type", tc.in, got)
			}
		}
	}
}

// BenchmarkUnmarshal compares Unmarshal with encoding/json on params of
// the shape the server decodes (a name, arguments, _meta), clean and with
// a case-folded synonym (which costs a copy).
func BenchmarkUnmarshal(b *testing.B) {
	type params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Meta      map[string]any  `json:"_meta,omitempty"`
		Ref       *inner          `json:"ref,omitempty"`
	}
	clean := []byte(`{"name":"echo","arguments":{"text":"hello, world","n":3},"_meta":{"progressToken":7},"ref":{"type":"ref/prompt","name":"p"}}`)
	folded := []byte(`{"name":"echo","NAME":"x","arguments":{"text":"hello, world","n":3},"_meta":{"progressToken":7},"ref":{"type":"ref/prompt","name":"p"}}`)
	for _, bc := range []struct {
		name string
		data []byte
		f    func([]byte, any) error
	}{
		{"encoding-json", clean, json.Unmarshal},
		{"strict", clean, Unmarshal},
		{"strict-folded", folded, Unmarshal},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var p params
				if err := bc.f(bc.data, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
