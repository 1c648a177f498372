package jsonrpc

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/jsonfast"
)

// maxDepth bounds the nesting of arrays and objects the scanner accepts, so
// that hostile input cannot exhaust the stack.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

// errTooDeep is a value whose arrays and objects nest deeper than
// maxDepth: well-formed perhaps, but refused, and said so.
var errTooDeep = errors.New("the JSON nests deeper than " + strconv.Itoa(maxDepth) + " levels of arrays and objects")

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// skipValue validates the JSON value that starts at data[i] (after any
// whitespace) and returns the index just past it.
func skipValue(data []byte, i, depth int) (int, error) {
	end, ok := jsonfast.SkipValue(data, i, depth, maxDepth)
	if !ok {
		if jsonfast.TooDeep(data, i, end, depth, maxDepth) {
			return end, errTooDeep
		}
		return end, errSyntax
	}
	return end, nil
}

// scanString validates the string starting at data[i] (a '"') and returns
// the index past its closing quote and whether it holds escapes. Plain
// runs of the string are crossed eight bytes at a time.
func scanString(data []byte, i int) (end int, escaped bool, err error) {
	end, escaped, ok := jsonfast.ScanString(data, i)
	if !ok {
		return end, escaped, errSyntax
	}
	return end, escaped, nil
}

// unquote returns the value of a validated JSON string literal (quotes
// included in s). Unlike jsonfast.Unquote, which replaces invalid UTF-8
// with U+FFFD as encoding/json does, it keeps every byte as it came: a
// string id must be echoed exactly as the peer sent it.
func unquote(s []byte, escaped bool) string {
	if !escaped {
		return string(s[1 : len(s)-1])
	}
	s = s[1 : len(s)-1]
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		switch s[i+1] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(s[i+2 : i+6])
			i += 6
			if utf16IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 := hex4(s[i+2 : i+6])
					if r >= 0xD800 && r < 0xDC00 && r2 >= 0xDC00 && r2 < 0xE000 {
						b = utf8.AppendRune(b, (r-0xD800)<<10+(r2-0xDC00)+0x10000)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
			continue
		default: // '"', '\\', '/'
			b = append(b, s[i+1])
		}
		i += 2
	}
	return string(b)
}

func utf16IsSurrogate(r rune) bool { return r >= 0xD800 && r < 0xE000 }

func hex4(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}

// Valid reports whether data is one syntactically valid JSON value, with
// nothing but whitespace around it.
func Valid(data []byte) bool {
	return validate(data) == nil
}

// validate is Valid that says why not: errTooDeep or errSyntax.
func validate(data []byte) error {
	end, err := skipValue(data, 0, 0)
	if err == nil && skipSpace(data, end) != len(data) {
		err = errSyntax
	}
	return err
}
