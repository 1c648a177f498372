package jsonrpc

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects the scanner accepts, so
// that hostile input cannot exhaust the stack.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

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
	i = skipSpace(data, i)
	if i >= len(data) {
		return i, errSyntax
	}
	switch c := data[i]; {
	case c == '"':
		end, _, err := scanString(data, i)
		return end, err
	case c == '{':
		if depth >= maxDepth {
			return i, errSyntax
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1, nil
		}
		for {
			i = skipSpace(data, i)
			if i >= len(data) || data[i] != '"' {
				return i, errSyntax
			}
			var err error
			if i, _, err = scanString(data, i); err != nil {
				return i, err
			}
			i = skipSpace(data, i)
			if i >= len(data) || data[i] != ':' {
				return i, errSyntax
			}
			if i, err = skipValue(data, i+1, depth+1); err != nil {
				return i, err
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return i, errSyntax
			}
			if data[i] == '}' {
				return i + 1, nil
			}
			if data[i] != ',' {
				return i, errSyntax
			}
			i++
		}
	case c == '[':
		if depth >= maxDepth {
			return i, errSyntax
		}
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValue(data, i, depth+1); err != nil {
				return i, err
			}
			i = skipSpace(data, i)
			if i >= len(data) {
				return i, errSyntax
			}
			if data[i] == ']' {
				return i + 1, nil
			}
			if data[i] != ',' {
				return i, errSyntax
			}
			i++
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(data, i)
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	}
	return i, errSyntax
}

func literal(data []byte, i int, lit string) (int, error) {
	if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit), nil
	}
	return i, errSyntax
}

func scanNumber(data []byte, i int) (int, error) {
	if data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return i, errSyntax
	}
	switch {
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return i, errSyntax
	}
	if i < len(data) && data[i] == '.' {
		i++
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == start {
			return i, errSyntax
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == start {
			return i, errSyntax
		}
	}
	return i, nil
}

// scanString validates the string starting at data[i] (a '"') and returns
// the index past its closing quote and whether it holds escapes.
func scanString(data []byte, i int) (end int, escaped bool, err error) {
	i++
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				return i, escaped, errSyntax
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return i, escaped, errSyntax
				}
				for _, h := range data[i+2 : i+6] {
					if !isHex(h) {
						return i, escaped, errSyntax
					}
				}
				i += 6
			default:
				return i, escaped, errSyntax
			}
		case c < 0x20:
			return i, escaped, errSyntax
		default:
			i++
		}
	}
	return i, escaped, errSyntax
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// unquote returns the value of a validated JSON string literal (quotes
// included in s).
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
	end, err := skipValue(data, 0, 0)
	return err == nil && skipSpace(data, end) == len(data)
}
