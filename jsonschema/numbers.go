package jsonschema

import (
	"encoding/json"
	"strconv"
)

// Limits on JSON numbers. The validator works on exact rationals, which
// cannot represent some extreme numbers (it would crash on 1e1000010) and
// get slow on others; real schemas and tool arguments come nowhere near
// these limits.
const (
	maxNumberLen      = 1000  // bytes of a number's JSON text
	maxNumberExponent = 10000 // absolute value of its decimal exponent
)

// numberOK reports whether s is a JSON number (RFC 8259 grammar) within
// the limits above.
func numberOK(s string) bool {
	if s == "" || len(s) > maxNumberLen {
		return false
	}
	i := 0
	if s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i - start
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		if digits() == 0 {
			return false
		}
		if exp, err := strconv.Atoi(s[start:i]); err != nil || exp > maxNumberExponent {
			return false
		}
	}
	return i == len(s)
}

// badNumber looks for a json.Number in v that numberOK rejects and
// returns its JSON Pointer location.
func badNumber(v any) (loc string, num json.Number, found bool) {
	var path []string
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case json.Number:
			if !numberOK(string(v)) {
				num = v
				return true
			}
		case []any:
			for i, e := range v {
				path = append(path, strconv.Itoa(i))
				if walk(e) {
					return true
				}
				path = path[:len(path)-1]
			}
		case map[string]any:
			for k, e := range v {
				path = append(path, k)
				if walk(e) {
					return true
				}
				path = path[:len(path)-1]
			}
		}
		return false
	}
	if walk(v) {
		return pointer(path), num, true
	}
	return "", "", false
}

// numberIssue describes an unsupported number for an error.
func numberIssue(loc string, num json.Number) Issue {
	return Issue{loc, "number " + truncate(string(num), maxDisplayLen) + " is malformed or out of the supported range"}
}
