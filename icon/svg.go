package icon

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// maxSVGDepth bounds the nesting of elements that [SanitizeSVG] accepts.
const maxSVGDepth = 256

// svgElement reports whether name is in the allowlist of SVG elements kept
// by SanitizeSVG. Left out, with their content: script, foreignObject, the
// animation elements (animate, animateMotion, animateTransform, set,
// discard: they can rewrite href attributes), elements that load external
// content (image, feImage, cursor, tref, color-profile, font-face-uri) and
// SVG fonts.
func svgElement(name string) bool {
	switch name {
	case "svg", "g", "defs", "desc", "title", "metadata", "symbol", "use",
		"switch", "view", "a", "style",
		"path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
		"text", "tspan", "textPath",
		"linearGradient", "radialGradient", "stop", "pattern", "clipPath",
		"mask", "marker",
		"filter", "feBlend", "feColorMatrix", "feComponentTransfer",
		"feComposite", "feConvolveMatrix", "feDiffuseLighting",
		"feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood",
		"feFuncA", "feFuncB", "feFuncG", "feFuncR", "feGaussianBlur",
		"feMerge", "feMergeNode", "feMorphology", "feOffset", "fePointLight",
		"feSpecularLighting", "feSpotLight", "feTile", "feTurbulence":
		return true
	}
	return false
}

// SanitizeSVG parses data as XML with encoding/xml and re-serializes the
// part of it that is safe to render:
//
//   - a DOCTYPE or any other <!...> declaration (and so any entity) makes
//     the whole document refused, as does a root that is not svg, nesting
//     deeper than 256 elements, or malformed XML;
//   - only allowlisted SVG elements in the SVG namespace (or in none) are
//     kept; others are dropped with their content, among them script,
//     foreignObject, the animation elements, image and feImage;
//   - processing instructions (such as xml-stylesheet) and comments are
//     dropped, and so is anything after the root element;
//   - attributes are dropped when their name starts with "on" (in any case),
//     when they are in a namespace other than xlink (href and title only)
//     and xml (space and lang only), when they are href or xlink:href to
//     anything but a local fragment "#id", and when their value has CSS
//     that could reach outside the document (see below);
//   - a style element whose text, or a style attribute whose value, has an
//     @import, a url() that is not a local fragment, image(), image-set(),
//     cross-fade(), element(), src(), expression(), a backslash escape, or
//     a javascript: or vbscript: URL is dropped.
//
// The output is canonical: every element unprefixed, the root declaring the
// SVG and xlink namespaces, text and attribute values escaped anew. The
// error is an [*Error] with [ReasonSVG].
func SanitizeSVG(data []byte) ([]byte, error) {
	d := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte(utf8BOM))))
	d.Strict = true
	var (
		out      bytes.Buffer
		depth    int // open elements written
		skip     int // >0 while inside a dropped element
		style    *styleBuf
		rootSeen bool
	)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Error{Reason: ReasonSVG, Detail: "malformed XML", Err: err}
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, refuse(ReasonSVG, "DOCTYPE and entity declarations are refused")
		case xml.StartElement:
			if rootSeen && depth == 0 {
				continue // after the root
			}
			if skip > 0 || style != nil {
				if style != nil {
					style.bad = true // elements inside style
				}
				skip++
				continue
			}
			known := (t.Name.Space == "" || t.Name.Space == svgNS) && svgElement(t.Name.Local)
			if !rootSeen {
				if !known || t.Name.Local != "svg" {
					return nil, refuse(ReasonSVG, "root element is not svg")
				}
				rootSeen = true
			}
			if !known {
				skip = 1
				continue
			}
			if depth >= maxSVGDepth {
				return nil, refuse(ReasonSVG, "elements nested deeper than %d", maxSVGDepth)
			}
			if t.Name.Local == "style" {
				style = &styleBuf{attr: t.Attr}
				continue
			}
			writeStart(&out, t, depth == 0)
			depth++
		case xml.EndElement:
			switch {
			case skip > 0:
				skip--
			case style != nil:
				if !style.bad && cssSafe(style.text.String()) {
					writeStart(&out, xml.StartElement{Name: xml.Name{Local: "style"}, Attr: style.attr}, false)
					escapeText(&out, style.text.String())
					out.WriteString("</style>")
				}
				style = nil
			case depth > 0:
				depth--
				out.WriteString("</" + t.Name.Local + ">")
			}
		case xml.CharData:
			switch {
			case skip > 0 || depth == 0:
			case style != nil:
				style.text.Write(t)
			default:
				escapeText(&out, string(t))
			}
		}
		// Comments and processing instructions are dropped.
	}
	if !rootSeen {
		return nil, refuse(ReasonSVG, "no root element")
	}
	return out.Bytes(), nil
}

type styleBuf struct {
	attr []xml.Attr
	text strings.Builder
	bad  bool
}

// writeStart writes the start tag of t with its safe attributes.
func writeStart(out *bytes.Buffer, t xml.StartElement, root bool) {
	out.WriteString("<" + t.Name.Local)
	if root {
		out.WriteString(` xmlns="` + svgNS + `" xmlns:xlink="` + xlinkNS + `"`)
	}
	seen := make(map[string]bool, len(t.Attr))
	for _, a := range t.Attr {
		name, ok := safeAttr(a)
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		out.WriteString(" " + name + `="`)
		escapeAttr(out, a.Value)
		out.WriteString(`"`)
	}
	out.WriteString(">")
}

// safeAttr returns the name to write a for, or false to drop it.
func safeAttr(a xml.Attr) (string, bool) {
	local := a.Name.Local
	if !plainName(local) || strings.HasPrefix(strings.ToLower(local), "on") {
		return "", false
	}
	var name string
	switch a.Name.Space {
	case "":
		if local == "xmlns" {
			return "", false
		}
		name = local
	case xlinkNS:
		if local != "href" && local != "title" {
			return "", false
		}
		name = "xlink:" + local
	case xmlNS:
		if local != "space" && local != "lang" {
			return "", false
		}
		name = "xml:" + local
	default: // xmlns declarations, other and unbound namespaces
		return "", false
	}
	if local == "href" && !localFragment(a.Value) {
		return "", false
	}
	if !cssSafe(a.Value) {
		return "", false
	}
	return name, true
}

// plainName reports whether s is a non-empty ASCII name of letters, digits,
// '-', '_' and '.', starting with a letter or '_'.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		case i > 0 && ('0' <= c && c <= '9' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// localFragment reports whether s is "#id" with a plain id.
func localFragment(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) > 1 && s[0] == '#' && plainName(s[1:])
}

// cssSafe reports whether s, CSS in a style element, a style attribute or a
// presentation attribute, refers to nothing outside the document: once it is
// lowercased and rid of comments, every url() is a local fragment and none
// of the denied substrings occurs.
func cssSafe(s string) bool {
	// Every denied construct and comments need one of these bytes (behavior and
	// -moz-binding are properties, which need a colon).
	if !strings.ContainsAny(s, `\(@:/`) {
		return true
	}
	denied := [...]string{
		`\`, "@import", "javascript:", "vbscript:", "expression(", "image(",
		"image-set(", "cross-fade(", "element(", "src(", "-moz-binding",
		"behavior",
	}
	s = strings.ToLower(s)
	var b strings.Builder
	for {
		i := strings.Index(s, "/*")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		b.WriteByte(' ')
		j := strings.Index(s[i+2:], "*/")
		if j < 0 {
			return false // unterminated comment
		}
		s = s[i+2+j+2:]
	}
	s = b.String()
	for _, bad := range denied {
		if strings.Contains(s, bad) {
			return false
		}
	}
	for {
		i := strings.Index(s, "url(")
		if i < 0 {
			return true
		}
		s = s[i+4:]
		j := strings.IndexByte(s, ')')
		if j < 0 {
			return false
		}
		arg := strings.Trim(s[:j], " \t\r\n\f")
		if len(arg) >= 2 && (arg[0] == '"' || arg[0] == '\'') && arg[len(arg)-1] == arg[0] {
			arg = arg[1 : len(arg)-1]
		}
		if !localFragment(arg) {
			return false
		}
		s = s[j+1:]
	}
}

// escapeText writes character data: markup characters escaped.
func escapeText(out *bytes.Buffer, s string) { escape(out, s, "&<>") }

// escapeAttr writes an attribute value for double quotes: the quotes too,
// and the white space that attribute-value normalization would turn into
// spaces (XML 1.0 §3.3.3), so that the value reads back unchanged.
func escapeAttr(out *bytes.Buffer, s string) { escape(out, s, "&<>\"'\t\n\r") }

// escape writes s to out with every byte listed in special (ASCII only)
// replaced by a character reference.
func escape(out *bytes.Buffer, s, special string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(special, c) < 0 {
			out.WriteByte(c)
			continue
		}
		switch c {
		case '&':
			out.WriteString("&amp;")
		case '<':
			out.WriteString("&lt;")
		case '>':
			out.WriteString("&gt;")
		case '"':
			out.WriteString("&quot;")
		default:
			out.WriteString("&#")
			out.WriteString(strconv.Itoa(int(c)))
			out.WriteByte(';')
		}
	}
}
