package jsonfast

// SkipValue checks the JSON value that starts at data[i] (after any
// whitespace) and returns the index just past it; ok is false if it is not
// valid JSON (RFC 8259; invalid UTF-8 in strings passes, as encoding/json
// lets it) or if its arrays and objects nest deeper than maxDepth, depth
// being the nesting already around it.
func SkipValue(data []byte, i, depth, maxDepth int) (int, bool) {
	i = SkipSpace(data, i)
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '"':
		end, _, ok := ScanString(data, i)
		return end, ok
	case c == '{':
		if depth >= maxDepth {
			return i, false
		}
		i = SkipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1, true
		}
		for {
			i = SkipSpace(data, i)
			if i >= len(data) || data[i] != '"' {
				return i, false
			}
			var ok bool
			if i, _, ok = ScanString(data, i); !ok {
				return i, false
			}
			i = SkipSpace(data, i)
			if i >= len(data) || data[i] != ':' {
				return i, false
			}
			if i, ok = SkipValue(data, i+1, depth+1, maxDepth); !ok {
				return i, false
			}
			i = SkipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			if data[i] == '}' {
				return i + 1, true
			}
			if data[i] != ',' {
				return i, false
			}
			i++
		}
	case c == '[':
		if depth >= maxDepth {
			return i, false
		}
		i = SkipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = SkipValue(data, i, depth+1, maxDepth); !ok {
				return i, false
			}
			i = SkipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			if data[i] == ']' {
				return i + 1, true
			}
			if data[i] != ',' {
				return i, false
			}
			i++
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(data, i)
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	}
	return i, false
}

func literal(data []byte, i int, lit string) (int, bool) {
	if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

func skipNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return i, false
	}
	switch {
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		start := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		start := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	return i, true
}

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// TooDeep reports whether SkipValue(data, i, depth, maxDepth), having
// failed at end, failed because an array or object there would nest
// deeper than maxDepth, rather than because the JSON is malformed: the
// error path calls it to say which, so that the scanner itself stays as
// fast. It is so when data[end] opens an array or object where a value
// may stand and the nesting there has reached maxDepth; data[i:end] is
// known to be well-formed so far.
func TooDeep(data []byte, i, end, depth, maxDepth int) bool {
	if end < i || end >= len(data) || (data[end] != '{' && data[end] != '[') {
		return false
	}
	var open []byte // the containers around data[j], innermost last
	prev := byte(0) // the last byte before data[j] outside strings and spaces
	for j := i; j < end; j++ {
		switch c := data[j]; c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			e, _, ok := ScanString(data, j)
			if !ok {
				return false
			}
			j = e - 1
		case '{', '[':
			open = append(open, c)
		case '}', ']':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
		prev = data[j]
	}
	if depth+len(open) < maxDepth {
		return false
	}
	switch prev {
	case 0, ':', '[': // the value itself, a member's value, an array's first
		return true
	case ',': // an array's next element; in an object a key comes next
		return len(open) > 0 && open[len(open)-1] == '['
	}
	return false
}
