package jsonfast

// ScanObject walks the JSON object whose '{' is at data[i] (after any
// space). For each member it calls member with the key's bytes as they
// appear between the quotes and the index where the member's value starts
// (space skipped); member returns the index just past that value, or false
// to stop the walk. ScanObject returns the index just past the closing '}'.
//
// It reports false when the text is not an object, is malformed, a key
// holds an escape sequence (so that callers may compare keys byte by byte),
// or member stopped it. Values are not checked here: member must skip or
// decode them.
func ScanObject(data []byte, i int, member func(key []byte, value int) (end int, ok bool)) (end int, ok bool) {
	i = SkipSpace(data, i)
	if i >= len(data) || data[i] != '{' {
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
		kend, escaped, ok := ScanString(data, i)
		if !ok || escaped {
			return i, false
		}
		key := data[i+1 : kend-1]
		i = SkipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		if i, ok = member(key, SkipSpace(data, i+1)); !ok {
			return i, false
		}
		i = SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case '}':
			return i + 1, true
		case ',':
			i++
		default:
			return i, false
		}
	}
}
