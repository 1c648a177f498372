package icon

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// checkSafeSVG fails t unless out, an output of SanitizeSVG, is well-formed
// XML with an svg root, only allowlisted elements, no event attribute, no
// href but local fragments, no unsafe CSS, and is its own sanitization.
func checkSafeSVG(t testing.TB, out []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(out))
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("sanitized output is not XML: %v\n%s", err, out)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 && tok.Name.Local != "svg" {
				t.Fatalf("root %q\n%s", tok.Name.Local, out)
			}
			depth++
			if tok.Name.Space != svgNS || !svgElement(tok.Name.Local) {
				t.Fatalf("element %v kept\n%s", tok.Name, out)
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					t.Fatalf("event attribute %v kept\n%s", a.Name, out)
				}
				if a.Name.Local == "href" && !localFragment(a.Value) {
					t.Fatalf("external href %q kept\n%s", a.Value, out)
				}
				if !cssSafe(a.Value) && a.Name.Space != "xmlns" && !(a.Name.Space == "" && a.Name.Local == "xmlns") {
					t.Fatalf("unsafe value %v=%q kept\n%s", a.Name, a.Value, out)
				}
			}
		case xml.EndElement:
			depth--
		case xml.Directive, xml.ProcInst, xml.Comment:
			t.Fatalf("%T kept\n%s", tok, out)
		}
	}
	if bytes.Contains(bytes.ToLower(out), []byte("<script")) {
		t.Fatalf("<script in output\n%s", out)
	}
	again, err := SanitizeSVG(out)
	if err != nil {
		t.Fatalf("sanitizing the output again: %v\n%s", err, out)
	}
	if !bytes.Equal(again, out) {
		t.Fatalf("not idempotent:\n%s\n%s", out, again)
	}
}

func TestSanitizeSVG(t *testing.T) {
	const head = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">`
	const outHead = head
	tests := []struct {
		name    string
		in      string
		want    string   // exact output, if not ""
		absent  []string // substrings that must not be in the output
		present []string // substrings that must be in the output
	}{
		{
			name: "script and onload",
			in:   `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)" width="10" height="10"><script>alert(2)</script><circle r="5" onclick="alert(3)" fill="red"/></svg>`,
			want: outHead[:len(outHead)-1] + ` width="10" height="10"><circle r="5" fill="red"></circle></svg>`,
		},
		{
			name:   "event attributes in any case",
			in:     `<svg ONLOAD="a()" OnMouseOver="b()"><g oNcLiCk="c()"/></svg>`,
			absent: []string{"a()", "b()", "c()"},
		},
		{
			name:   "script with CDATA and namespace prefix",
			in:     `<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:script><![CDATA[alert(1)]]></s:script><s:rect width="1"/></s:svg>`,
			want:   outHead + `<rect width="1"></rect></svg>`,
			absent: []string{"alert"},
		},
		{
			name:   "script in xhtml namespace",
			in:     `<svg><h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script><script xmlns="http://www.w3.org/1999/xhtml">alert(2)</script></svg>`,
			absent: []string{"alert"},
		},
		{
			name:   "foreignObject",
			in:     head + `<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil.example/"/></foreignObject><rect/></svg>`,
			absent: []string{"foreignObject", "iframe", "evil"},
		},
		{
			name:    "external and local references",
			in:      head + `<use xlink:href="https://evil.example/x.svg#a"/><use href="//evil.example/x"/><use href="#a"/><use xlink:href=" #b "/></svg>`,
			absent:  []string{"evil"},
			present: []string{`<use href="#a">`, `<use xlink:href=" #b ">`},
		},
		{
			name:   "javascript link, entity-encoded",
			in:     head + `<a href="&#106;avascript:alert(1)"><text>x</text></a><a xlink:href="javascript:alert(2)"/></svg>`,
			absent: []string{"alert", "javascript"},
		},
		{
			name:   "animation that rewrites href",
			in:     head + `<a href="#x"><set attributeName="href" to="javascript:alert(1)"/><animate attributeName="href" values="javascript:alert(2)"/></a></svg>`,
			absent: []string{"alert", "set", "animate"},
		},
		{
			name:    "style with @import and external url",
			in:      head + `<style>@import url(https://evil.example/x.css);</style><style>rect{fill:url(https://evil.example/p.svg#g)}</style><style>rect{fill:url( '#g' )}</style></svg>`,
			absent:  []string{"evil", "@import"},
			present: []string{`<style>rect{fill:url( '#g' )}</style>`},
		},
		{
			name:   "style with CSS escape and comment",
			in:     head + `<style>rect{fill:u\72l(https://evil.example/)}</style><style>@import/**/'https://evil.example/x'</style><style>a{b:c} /* open</style></svg>`,
			absent: []string{"evil", "<style"},
		},
		{
			name:   "style with image-set and expression",
			in:     head + `<style>g{background:image-set("https://evil.example/a.png" 1x)}</style><rect style="width:expression(alert(1))"/></svg>`,
			absent: []string{"evil", "alert", "<style"},
		},
		{
			name:    "style breaking out in HTML",
			in:      head + `<style><![CDATA[</style><script>alert(1)</script>]]></style></svg>`,
			present: []string{`<style>&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt;</style>`},
		},
		{
			name:    "style attribute and presentation attribute urls",
			in:      head + `<rect style="fill:url(https://evil.example/#p)" fill="url(http://evil.example/#q)" stroke="url(#ok)"/></svg>`,
			absent:  []string{"evil"},
			present: []string{`stroke="url(#ok)"`},
		},
		{
			name:   "image and feImage load external content",
			in:     head + `<image href="https://evil.example/a.png"/><image href="data:image/png;base64,AAAA"/><filter><feImage href="https://evil.example/b"/></filter></svg>`,
			absent: []string{"evil", "image", "data:"},
		},
		{
			name:   "processing instructions and comments",
			in:     `<?xml version="1.0" encoding="UTF-8"?><?xml-stylesheet href="https://evil.example/x.css"?><!-- hi --><svg><!-- there --><g/></svg>`,
			want:   outHead + `<g></g></svg>`,
			absent: []string{"evil", "<!--", "<?"},
		},
		{
			name:   "content after the root",
			in:     `<svg></svg><script>alert(1)</script><svg onload="alert(2)"/>`,
			want:   outHead + `</svg>`,
			absent: []string{"alert"},
		},
		{
			name:    "odd namespaces and xml attributes",
			in:      `<svg xmlns:x="urn:x" x:onload="a()" xml:base="https://evil.example/" xml:space="preserve" xlink:href="#u"><g x:foo="1"/></svg>`,
			absent:  []string{"a()", "evil", "x:foo", "urn:x", "#u"},
			present: []string{`xml:space="preserve"`},
		},
		{
			name:    "escaping",
			in:      head + `<text x="1" font-family="a&amp;b &quot;c&quot; 'd'">1 &lt; 2 &amp; 3 &gt; 2</text></svg>`,
			present: []string{`font-family="a&amp;b &quot;c&quot; &#39;d&#39;"`, `1 &lt; 2 &amp; 3 &gt; 2`},
		},
		{
			name:   "html elements in svg",
			in:     head + `<p><img src="x" onerror="alert(1)"/></p><iframe/></svg>`,
			absent: []string{"alert", "img", "iframe", "<p"},
		},
		{
			name:    "byte order mark",
			in:      "\ufeff<svg><rect/></svg>",
			present: []string{"<rect>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SanitizeSVG([]byte(tt.in))
			if err != nil {
				t.Fatalf("SanitizeSVG: %v", err)
			}
			checkSafeSVG(t, got)
			if tt.want != "" && string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			for _, s := range tt.absent {
				if bytes.Contains(got, []byte(s)) {
					t.Errorf("output has %q:\n%s", s, got)
				}
			}
			for _, s := range tt.present {
				if !bytes.Contains(got, []byte(s)) {
					t.Errorf("output lacks %q:\n%s", s, got)
				}
			}
		})
	}
}

func TestSanitizeSVGRefused(t *testing.T) {
	tests := []struct{ name, in string }{
		{"doctype", `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg/>`},
		{"billion laughs", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><svg>&lol2;</svg>`},
		{"external entity", `<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>`},
		{"undeclared entity", `<svg>&nbsp;</svg>`},
		{"root is not svg", `<html><svg/></html>`},
		{"root in other namespace", `<svg xmlns="http://www.w3.org/1999/xhtml"/>`},
		{"root is script", `<script>alert(1)</script>`},
		{"empty", ``},
		{"text only", `hello`},
		{"unclosed", `<svg><g>`},
		{"mismatched", `<svg></g>`},
		{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><svg/>`},
		{"too deep", "<svg>" + strings.Repeat("<g>", maxSVGDepth) + strings.Repeat("</g>", maxSVGDepth) + "</svg>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := SanitizeSVG([]byte(tt.in))
			wantReason(t, err, ReasonSVG)
			if out != nil {
				t.Errorf("output %q with error", out)
			}
		})
	}
	// Just under the depth bound is accepted.
	ok := "<svg>" + strings.Repeat("<g>", maxSVGDepth-1) + strings.Repeat("</g>", maxSVGDepth-1) + "</svg>"
	if _, err := SanitizeSVG([]byte(ok)); err != nil {
		t.Errorf("depth %d: %v", maxSVGDepth, err)
	}
}

func TestCSSSafe(t *testing.T) {
	tests := []struct {
		in   string
		safe bool
	}{
		{"fill:red", true},
		{"url(#a)", true},
		{`URL("#a") url('#b')`, true},
		{"a/* c */b", true},
		{"url(a.png)", false},
		{"url(#a) url(b)", false},
		{"url(#a", false},
		{"URL(//evil)", false},
		{"url(data:image/png;base64,AA)", false},
		{"@IMPORT 'x'", false},
		{`\75rl(x)`, false},
		{"a /* open", false},
		{"JavaScript:alert(1)", false},
		{"image-set('x' 1x)", false},
		{"-webkit-image-set('x' 1x)", false},
		{"cross-fade(url(#a), 'x')", false},
		{"src('x')", false},
	}
	for _, tt := range tests {
		if got := cssSafe(tt.in); got != tt.safe {
			t.Errorf("cssSafe(%q) = %v, want %v", tt.in, got, tt.safe)
		}
	}
}

func BenchmarkSanitizeSVG(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs>`)
	for range 200 {
		sb.WriteString(`<path d="M12 2L2 7l10 5 10-5-10-5z" fill="url(#g)" onclick="x()"/>`)
	}
	sb.WriteString(`<script>alert(1)</script></svg>`)
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SanitizeSVG(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEscape pins the bytes the sanitizer writes for character data and
// for double-quoted attribute values.
func TestEscape(t *testing.T) {
	const in = "a&b<c>d\"e'f\tg\nh\ri é"
	for _, tc := range []struct {
		name string
		fn   func(*bytes.Buffer, string)
		want string
	}{
		{"text", escapeText, "a&amp;b&lt;c&gt;d\"e'f\tg\nh\ri é"},
		{"attribute", escapeAttr, "a&amp;b&lt;c&gt;d&quot;e&#39;f&#9;g&#10;h&#13;i é"},
	} {
		var out bytes.Buffer
		tc.fn(&out, in)
		if out.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, out.String(), tc.want)
		}
	}
}
