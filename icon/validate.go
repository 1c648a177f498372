package icon

import (
	"mime"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/mcp"
)

// Validate checks an icon's metadata without fetching anything:
//
//   - src is an https URL with a host and without user credentials, or a
//     data: URI whose data is base64 encoded (schemes are matched without
//     regard to case);
//   - mimeType, if set, is a well-formed media type;
//   - every sizes entry is "WxH" (positive decimal integers without sign or
//     leading zero, a lowercase x between them) or "any";
//   - theme is empty, "light" or "dark".
//
// The error is an [*Error] whose Field names the field at fault.
func Validate(ic mcp.Icon) error {
	if err := validateSrc(ic.Src); err != nil {
		return err
	}
	if ic.MIMEType != "" {
		if _, _, err := mime.ParseMediaType(ic.MIMEType); err != nil {
			return &Error{Reason: ReasonInvalid, Field: "mimeType", Detail: strconv.Quote(ic.MIMEType), Err: err}
		}
	}
	for _, s := range ic.Sizes {
		if _, _, _, err := ParseSize(s); err != nil {
			return err
		}
	}
	switch ic.Theme {
	case "", "light", "dark":
	default:
		return fieldError(ReasonInvalid, "theme", "%q is not light or dark", ic.Theme)
	}
	return nil
}

// ParseSize parses one entry of an icon's sizes: "any" gives scalable == true,
// "WxH" gives the width and height. The error is an [*Error] with Field
// "sizes".
func ParseSize(s string) (w, h int, scalable bool, err error) {
	if s == "any" {
		return 0, 0, true, nil
	}
	ws, hs, ok := strings.Cut(s, "x")
	if ok {
		w, ok = parseDim(ws)
	}
	if ok {
		h, ok = parseDim(hs)
	}
	if !ok {
		return 0, 0, false, fieldError(ReasonInvalid, "sizes", "%q is not WxH or any", s)
	}
	return w, h, false, nil
}

// parseDim parses a positive decimal integer of at most 9 digits without
// sign or leading zero.
func parseDim(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func validateSrc(src string) error {
	scheme, _, ok := strings.Cut(src, ":")
	if !ok {
		return fieldError(ReasonScheme, "src", "no scheme in %q", truncate(src))
	}
	switch strings.ToLower(scheme) {
	case "data":
		_, err := parseDataURI(src)
		return err
	case "https":
		_, err := parseHTTPS(src)
		return err
	}
	return fieldError(ReasonScheme, "src", "scheme %q is not https or data", truncate(scheme))
}

// parseHTTPS parses an https URL that has a host and no user information.
func parseHTTPS(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, &Error{Reason: ReasonURL, Field: "src", Err: err}
	}
	if u.Scheme != "https" { // url.Parse lowercases the scheme
		return nil, fieldError(ReasonScheme, "src", "scheme %q is not https or data", truncate(u.Scheme))
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, fieldError(ReasonURL, "src", "https URL without host")
	}
	if u.User != nil {
		return nil, fieldError(ReasonURL, "src", "URL carries user credentials")
	}
	return u, nil
}

// dataURI is a parsed data: URI (RFC 2397) with base64 data.
type dataURI struct {
	mediaType string // lowercased, without parameters; "" if absent
	data      string // the base64 text, still encoded
}

func parseDataURI(s string) (dataURI, error) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") {
		return dataURI{}, fieldError(ReasonScheme, "src", "not a data: URI")
	}
	header, data, ok := strings.Cut(s[5:], ",")
	if !ok {
		return dataURI{}, fieldError(ReasonURL, "src", "data: URI without comma")
	}
	i := strings.LastIndexByte(header, ';')
	if i < 0 || !strings.EqualFold(header[i+1:], "base64") {
		return dataURI{}, fieldError(ReasonURL, "src", "data: URI is not base64 encoded")
	}
	d := dataURI{data: data}
	if mt := header[:i]; mt != "" {
		parsed, _, err := mime.ParseMediaType(mt)
		if err != nil {
			return dataURI{}, &Error{Reason: ReasonURL, Field: "src", Detail: "data: URI media type", Err: err}
		}
		d.mediaType = parsed
	}
	return d, nil
}

// truncate shortens s for error messages.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
