package jsonschema

import "strings"

// A Dialect identifies a JSON Schema dialect by its canonical meta-schema
// URI, the value a schema names in its "$schema" keyword.
type Dialect string

// The dialects this package supports. A schema without "$schema" is
// compiled as [Draft202012], as MCP requires.
const (
	Draft202012 Dialect = "https://json-schema.org/draft/2020-12/schema"
	Draft201909 Dialect = "https://json-schema.org/draft/2019-09/schema"
	Draft7      Dialect = "http://json-schema.org/draft-07/schema#"
	Draft6      Dialect = "http://json-schema.org/draft-06/schema#"
	Draft4      Dialect = "http://json-schema.org/draft-04/schema#"
)

// SupportedDialects returns the supported dialects, newest first.
// The returned slice is a fresh copy that the caller may modify.
func SupportedDialects() []Dialect {
	return []Dialect{Draft202012, Draft201909, Draft7, Draft6, Draft4}
}

// ParseDialect maps a "$schema" value to a supported [Dialect].
//
// The "http" and "https" forms of each meta-schema URI are accepted, with
// or without an empty trailing fragment ("#"). Any other value yields an
// [*UnsupportedDialectError].
func ParseDialect(uri string) (Dialect, error) {
	rest, ok := strings.CutPrefix(uri, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(uri, "http://")
	}
	if ok {
		switch strings.TrimSuffix(rest, "#") {
		case "json-schema.org/draft/2020-12/schema":
			return Draft202012, nil
		case "json-schema.org/draft/2019-09/schema":
			return Draft201909, nil
		case "json-schema.org/draft-07/schema":
			return Draft7, nil
		case "json-schema.org/draft-06/schema":
			return Draft6, nil
		case "json-schema.org/draft-04/schema":
			return Draft4, nil
		}
	}
	return "", &UnsupportedDialectError{URI: uri}
}

// dialectOfVersion maps the library's draft number to a Dialect.
func dialectOfVersion(v int) Dialect {
	switch v {
	case 2019:
		return Draft201909
	case 7:
		return Draft7
	case 6:
		return Draft6
	case 4:
		return Draft4
	default:
		return Draft202012
	}
}
