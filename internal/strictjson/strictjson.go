// Package strictjson decodes JSON from peers into Go values as
// encoding/json does, but with exact member names.
//
// encoding/json (v1) matches an object member to a struct field whose name
// equals the member's case-insensitively when no field has the exact name,
// and a repeated member overwrites (or merges into) the field. So "Name",
// "NAME" and "name" all set a field tagged "name", the last one wins, and
// two readers of the same bytes, one exact and one encoding/json, can see
// different values: the OAuth bearer middleware decided a tools/call's
// scope from "name" while the server called the tool named by "NAME".
// There is no option to turn that off in v1, so Unmarshal walks the input
// along the target type first:
//
//   - a member whose name matches a field only when case is ignored is an
//     unknown member: it is removed before encoding/json sees the input, so
//     it sets nothing (unknown members are ignored, as encoding/json
//     ignores them);
//   - a member that names the same field twice makes the whole input
//     invalid: Unmarshal returns a *DuplicateMemberError (errors.Is
//     ErrDuplicateMember) and leaves v as it was.
//
// Both rules apply at every depth where the input is decoded into a
// struct: through pointers, slices, arrays and map values. Values decoded
// by a type's own UnmarshalJSON (and json.RawMessage, interfaces, maps of
// interfaces) are passed through untouched: such a method must decode its
// own members with Unmarshal, as every decoder of peer input in this
// module does.
//
// The walk allocates nothing for input that needs no rewriting and whose
// structs have at most 64 JSON fields; input holding a case-folded synonym
// is copied once without it.
package strictjson

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
)

// MaxDepth is the nesting depth beyond which input is refused, the same as
// encoding/json's own limit.
const MaxDepth = 10000

// ErrDuplicateMember matches a *DuplicateMemberError with errors.Is.
var ErrDuplicateMember = errors.New("a member appears more than once")

// DuplicateMemberError reports an object that gives the same struct field
// twice. Name is the member's name as it appears in the JSON.
type DuplicateMemberError struct {
	Name string
}

func (e *DuplicateMemberError) Error() string {
	return fmt.Sprintf("member %q appears more than once", e.Name)
}

// Is reports whether target is ErrDuplicateMember.
func (e *DuplicateMemberError) Is(target error) bool { return target == ErrDuplicateMember }

// Unmarshal decodes data into v, a non-nil pointer, as json.Unmarshal
// does but with the rules of the package documentation: exact member
// names, and no member given twice for the same struct field. Its errors
// are encoding/json's, or a *DuplicateMemberError. It is safe for
// concurrent use.
func Unmarshal(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return json.Unmarshal(data, v) // encoding/json's InvalidUnmarshalError
	}
	p := planFor(t.Elem())
	if p.trivial {
		return json.Unmarshal(data, v)
	}
	var w walker
	end, ok := w.walk(data, 0, p, 0)
	if w.err != nil {
		return w.err
	}
	if !ok || jsonfast.SkipSpace(data, end) != len(data) {
		return syntaxError(data)
	}
	if w.strip {
		out := make([]byte, 0, len(data))
		w = walker{out: &out}
		w.walk(data, 0, p, 0)
		data = out
	}
	return json.Unmarshal(data, v)
}

// syntaxError returns encoding/json's error for data that the walk could
// not follow; data is never decoded into the caller's value here.
func syntaxError(data []byte) error {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	// The walk refuses only what encoding/json refuses, or nesting deeper
	// than MaxDepth, which encoding/json refuses as well.
	return errors.New("strictjson: input nested too deeply")
}

// A plan is what the walk needs to know of a Go type.
type plan struct {
	kind    kind
	trivial bool  // no struct is reached below: encoding/json may decode as is
	elem    *plan // slice, array and map element
	// Struct fields by exact JSON name, and the folded names (as
	// encoding/json folds them) of all of them.
	fields map[string]fieldPlan
	folded map[string]struct{}
	n      int // number of distinct JSON names
}

type kind uint8

const (
	opaque kind = iota
	structKind
	listKind
	mapKind
)

type fieldPlan struct {
	index int // in 0..n-1, for duplicate detection
	plan  *plan
}

// plans caches the plan of each type. A plan depends only on its type, so
// the cache holds no state that callers can observe; encoding/json keeps
// the same kind of cache of its field lists.
var plans sync.Map // reflect.Type → *plan

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func planFor(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	b := builder{building: map[reflect.Type]*plan{}}
	p := b.build(t)
	for bt, bp := range b.building {
		plans.LoadOrStore(bt, bp)
	}
	return p
}

// builder builds the plans of a type and of the types it reaches; building
// holds those begun, so that recursive types end.
type builder struct {
	building map[reflect.Type]*plan
}

func (b *builder) build(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := b.building[t]; ok {
		return p
	}
	custom := t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
	if t.Kind() == reflect.Pointer && !custom {
		// A pointer is decoded as what it points to.
		e := b.build(t.Elem())
		b.building[t] = e
		return e
	}
	p := &plan{}
	b.building[t] = p
	if custom {
		p.trivial = true
		return p
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		p.kind, p.elem = listKind, b.build(t.Elem())
	case reflect.Map:
		p.kind, p.elem = mapKind, b.build(t.Elem())
	case reflect.Struct:
		p.kind = structKind
		p.fields = map[string]fieldPlan{}
		p.folded = map[string]struct{}{}
		b.addFields(p, t, 0)
	default:
		p.trivial = true
	}
	p.trivial = b.isTrivial(p, map[*plan]bool{})
	return p
}

// isTrivial reports whether no struct is reached from p.
func (b *builder) isTrivial(p *plan, seen map[*plan]bool) bool {
	if seen[p] {
		return true
	}
	seen[p] = true
	switch p.kind {
	case structKind:
		return false
	case listKind, mapKind:
		return b.isTrivial(p.elem, seen)
	}
	return p.trivial || p.kind == opaque
}

// addFields adds the JSON fields of struct t to p, with those of embedded
// structs, as encoding/json finds them. Where encoding/json would drop a
// field for a conflict, the name is kept here: an exact name that sets
// nothing is harmless, and so is removing a case-folded synonym of it.
func (b *builder) addFields(p *plan, t reflect.Type, depth int) {
	if depth > 16 {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validTag(name) {
			name = ""
		}
		ft := f.Type
		if f.Anonymous {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !f.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
			if name == "" && ft.Kind() == reflect.Struct {
				b.addFields(p, ft, depth+1)
				continue
			}
		} else if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fp := b.build(f.Type)
		if strings.Contains(","+opts+",", ",string,") {
			fp = &plan{trivial: true}
		}
		if _, ok := p.fields[name]; ok {
			continue // the shallower field wins
		}
		p.fields[name] = fieldPlan{index: p.n, plan: fp}
		p.n++
		p.folded[string(appendFold(nil, []byte(name)))] = struct{}{}
	}
}

// validTag is encoding/json's test of a tag name.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// appendFold appends to out the name in folded as encoding/json folds
// names to match fields case-insensitively: ASCII letters to upper case,
// other runes to the smallest rune of their case-folding orbit (so that
// the Kelvin sign matches 'k', and 'ſ' matches 's').
func appendFold(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// walker walks input along a plan. With out nil it only looks: it sets
// strip if a member must be removed, and err for a repeated member. With
// out set, it appends the input without those members to *out.
type walker struct {
	out   *[]byte
	strip bool
	err   error
}

// walk walks the value at data[i] (after optional space) along p and
// returns the index past it; ok is false for input that is not JSON.
func (w *walker) walk(data []byte, i int, p *plan, depth int) (int, bool) {
	i = jsonfast.SkipSpace(data, i)
	if i >= len(data) {
		return i, false
	}
	if p.trivial || depth >= MaxDepth {
		return w.copyValue(data, i, depth)
	}
	switch {
	case p.kind == structKind && data[i] == '{':
		return w.object(data, i, p, depth)
	case p.kind == mapKind && data[i] == '{':
		return w.object(data, i, p, depth)
	case p.kind == listKind && data[i] == '[':
		return w.array(data, i, p, depth)
	}
	return w.copyValue(data, i, depth)
}

func (w *walker) copyValue(data []byte, i, depth int) (int, bool) {
	end, ok := jsonfast.SkipValue(data, i, depth, MaxDepth)
	if ok && w.out != nil {
		*w.out = append(*w.out, data[i:end]...)
	}
	return end, ok
}

func (w *walker) emit(b ...byte) {
	if w.out != nil {
		*w.out = append(*w.out, b...)
	}
}

// object walks the object at data[i] (a '{') decoded into a struct (p's
// fields) or a map (p.elem for every value).
func (w *walker) object(data []byte, i int, p *plan, depth int) (int, bool) {
	var seen uint64
	var seenMore []bool // for structs of more than 64 names
	if p.kind == structKind && p.n > 64 {
		seenMore = make([]bool, p.n)
	}
	w.emit('{')
	first := true
	i = jsonfast.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		w.emit('}')
		return i + 1, true
	}
	for {
		i = jsonfast.SkipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return i, false
		}
		kstart := i
		kend, escaped, ok := jsonfast.ScanString(data, i)
		if !ok {
			return i, false
		}
		i = jsonfast.SkipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		vp := p.elem
		keep := true
		if p.kind == structKind {
			key := data[kstart+1 : kend-1]
			if escaped || !utf8.Valid(key) {
				key = []byte(jsonfast.Unquote(data[kstart:kend], escaped))
			}
			if f, ok := p.fields[string(key)]; ok {
				if f.index < 64 && seen&(1<<f.index) != 0 || f.index >= 64 && seenMore[f.index] {
					if w.err == nil {
						w.err = &DuplicateMemberError{Name: string(key)}
					}
					return i, false
				}
				if f.index < 64 {
					seen |= 1 << f.index
				} else {
					seenMore[f.index] = true
				}
				vp = f.plan
			} else {
				vp = trivialPlan
				var buf [32]byte
				if _, ok := p.folded[string(appendFold(buf[:0], key))]; ok {
					w.strip, keep = true, false
				}
			}
		}
		if keep {
			if !first {
				w.emit(',')
			}
			first = false
			w.emit(data[kstart:kend]...)
			w.emit(':')
			i, ok = w.walk(data, i+1, vp, depth+1)
		} else {
			i, ok = jsonfast.SkipValue(data, i+1, depth+1, MaxDepth)
		}
		if !ok {
			return i, false
		}
		i = jsonfast.SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case '}':
			w.emit('}')
			return i + 1, true
		case ',':
			i++
		default:
			return i, false
		}
	}
}

// array walks the array at data[i] (a '[') with p.elem for its elements.
func (w *walker) array(data []byte, i int, p *plan, depth int) (int, bool) {
	w.emit('[')
	i = jsonfast.SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		w.emit(']')
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = w.walk(data, i, p.elem, depth+1); !ok {
			return i, false
		}
		i = jsonfast.SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ']':
			w.emit(']')
			return i + 1, true
		case ',':
			w.emit(',')
			i++
		default:
			return i, false
		}
	}
}

// trivialPlan is the plan of a member that is not a field: skipped.
var trivialPlan = &plan{trivial: true}

// Describe returns the text of a decoding error from Unmarshal (or
// encoding/json) in the terms of JSON, for a peer: "params.ref.name must
// be a string, not a number" rather than encoding/json's "cannot unmarshal
// number into Go struct field wire.ref.name of type string", which names
// the receiver's Go types. Errors that encoding/json formats with a Go
// type and that it does not export as a type become a plain "a member has
// the wrong type". Other errors (syntax errors, a repeated member, the
// errors of a type's own UnmarshalJSON) keep their text.
func Describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := jsonKind(te.Type)
		got := te.Value
		switch {
		case got == "bool":
			got = "a boolean"
		case strings.HasPrefix(got, "number "):
			got = "the number " + strings.TrimPrefix(got, "number ")
		case got == "object" || got == "array":
			got = "an " + got
		case got != "":
			got = "a " + got
		}
		if te.Field != "" {
			return fmt.Sprintf("%s must be %s, not %s", te.Field, want, got)
		}
		return fmt.Sprintf("must be %s, not %s", want, got)
	}
	msg := err.Error()
	var se *json.SyntaxError
	if !errors.As(err, &se) && (strings.Contains(msg, "Go ") || strings.Contains(msg, " of type ") ||
		strings.Contains(msg, "unmarshal") || strings.Contains(msg, "interface {}")) {
		return "a member has the wrong type"
	}
	return msg
}

// jsonKind names the JSON values that a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value of another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer within range"
	case reflect.Float32, reflect.Float64:
		return "a number within range"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return "a base64 string"
		}
		return "an array"
	}
	return "a value of another type"
}
