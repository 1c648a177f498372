package icon

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpbody"
	"github.com/mcpstack/mcpstack/mcp"
)

// The defaults of [Options].
const (
	DefaultMaxBytes     = 1 << 20 // 1 MiB
	DefaultMaxWidth     = 1024
	DefaultMaxHeight    = 1024
	DefaultMaxFrames    = 1 // still images only
	DefaultMaxRedirects = 3
	DefaultTimeout      = 10 * time.Second
)

// maxHeaderBytes bounds the response headers of an icon fetch.
const maxHeaderBytes = 64 << 10

// Options configures a [Fetcher]. The zero value gives the defaults.
type Options struct {
	// MaxBytes bounds the body of a response and the decoded data of a
	// data: URI. Zero means DefaultMaxBytes.
	MaxBytes int64
	// MaxWidth and MaxHeight bound the pixel dimensions declared by the
	// image header. Zero means DefaultMaxWidth and DefaultMaxHeight.
	MaxWidth, MaxHeight int
	// MaxFrames bounds the frames of animated PNG and WebP. Zero means
	// DefaultMaxFrames, which refuses every animation.
	MaxFrames int
	// MaxRedirects bounds the redirects followed. Zero means
	// DefaultMaxRedirects; a negative value follows none.
	MaxRedirects int
	// Timeout bounds a whole fetch, including reading the body. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// AllowWebP admits image/webp besides PNG and JPEG.
	AllowWebP bool
	// AllowSVG admits image/svg+xml, always passed through [SanitizeSVG].
	AllowSVG bool
	// AllowedOrigins lists https origins (such as "https://cdn.example")
	// that icons may come from besides the server's own origin. It is the
	// only way to fetch https icons of a server without an origin, such as
	// one reached over stdio.
	AllowedOrigins []string
	// BaseTransport is cloned for the Fetcher's own transport, so that a
	// caller can set TLS roots, a proxy or a dialer. Its client
	// certificates are removed from the clone. Nil means a clone of
	// http.DefaultTransport.
	BaseTransport *http.Transport
}

// Image is a fetched icon whose bytes passed every check.
type Image struct {
	// MIMEType is the type detected from the bytes: TypePNG, TypeJPEG,
	// TypeWebP or TypeSVG.
	MIMEType string
	// Data is the image file; for SVG, the sanitized document.
	Data []byte
	// Width and Height are the dimensions declared by the header (for SVG,
	// zero when the document does not give an absolute size).
	Width, Height int
	// Frames is 1 for a still image.
	Frames int
}

// Fetcher retrieves icons under the security rules of MCP. It has its own
// http.Client, with no cookie jar and a transport that carries no
// Authorization, Cookie or Proxy-Authorization header and no client
// certificate. A Fetcher is safe for concurrent use.
type Fetcher struct {
	opts    Options
	origins map[string]bool
	accept  string
	client  *http.Client
}

// NewFetcher returns a Fetcher with the options opts. It fails when an entry
// of opts.AllowedOrigins is not an https URL with a host.
func NewFetcher(opts Options) (*Fetcher, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxWidth <= 0 {
		opts.MaxWidth = DefaultMaxWidth
	}
	if opts.MaxHeight <= 0 {
		opts.MaxHeight = DefaultMaxHeight
	}
	if opts.MaxFrames <= 0 {
		opts.MaxFrames = DefaultMaxFrames
	}
	switch {
	case opts.MaxRedirects == 0:
		opts.MaxRedirects = DefaultMaxRedirects
	case opts.MaxRedirects < 0:
		opts.MaxRedirects = 0
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	f := &Fetcher{opts: opts, origins: make(map[string]bool), accept: TypePNG + "," + TypeJPEG}
	for _, o := range opts.AllowedOrigins {
		origin, err := Origin(o)
		if err != nil || !strings.HasPrefix(origin, "https://") {
			return nil, fmt.Errorf("icon: allowed origin %q is not an https URL with a host", o)
		}
		f.origins[origin] = true
	}
	if opts.AllowWebP {
		f.accept += "," + TypeWebP
	}
	if opts.AllowSVG {
		f.accept += "," + TypeSVG
	}
	f.client = &http.Client{
		Transport:     &noCredentials{base: ownTransport(opts.BaseTransport)},
		CheckRedirect: f.checkRedirect,
	}
	return f, nil
}

// ownTransport clones base (or http.DefaultTransport) without client
// certificates, with compression off and response headers bounded.
func ownTransport(base *http.Transport) *http.Transport {
	if base == nil {
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			base = dt
		} else {
			base = &http.Transport{}
		}
	}
	t := base.Clone()
	if t.TLSClientConfig != nil {
		t.TLSClientConfig = t.TLSClientConfig.Clone()
		t.TLSClientConfig.Certificates = nil
		t.TLSClientConfig.GetClientCertificate = nil
	}
	t.DisableCompression = true
	if t.MaxResponseHeaderBytes <= 0 || t.MaxResponseHeaderBytes > maxHeaderBytes {
		t.MaxResponseHeaderBytes = maxHeaderBytes
	}
	return t
}

// noCredentials strips credentials from every request, redirects included,
// before it reaches the wire.
type noCredentials struct{ base http.RoundTripper }

func (n *noCredentials) RoundTrip(req *http.Request) (*http.Response, error) {
	h := req.Header
	if h.Get("Authorization") != "" || h.Get("Cookie") != "" || h.Get("Proxy-Authorization") != "" || req.URL.User != nil {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
		req.Header.Del("Cookie")
		req.Header.Del("Proxy-Authorization")
		req.URL.User = nil
	}
	return n.base.RoundTrip(req)
}

// checkRedirect refuses a redirect that loops, changes scheme or origin,
// carries credentials or exceeds the limit.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	next := withoutFragment(req.URL)
	for _, v := range via {
		if withoutFragment(v.URL) == next {
			return refuse(ReasonRedirect, "redirect loop at %s", truncate(next))
		}
	}
	if len(via) > f.opts.MaxRedirects {
		return refuse(ReasonRedirect, "more than %d redirects", f.opts.MaxRedirects)
	}
	if req.URL.Scheme != "https" {
		return refuse(ReasonRedirect, "redirect changes scheme to %q", truncate(req.URL.Scheme))
	}
	if req.URL.User != nil {
		return refuse(ReasonRedirect, "redirect URL carries user credentials")
	}
	from, _ := originOf(via[0].URL)
	to, err := originOf(req.URL)
	if err != nil || to != from {
		return refuse(ReasonRedirect, "redirect from %s to another origin %s", from, truncate(to))
	}
	return nil
}

func withoutFragment(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// Fetch validates ic, retrieves its bytes and checks them. serverURL is the
// URL of the server that gave the icon (any URL on its origin will do), or
// "" for a server without an origin, such as one reached over stdio.
//
// A data: icon is decoded after its size is checked. An https icon must be
// on serverURL's origin or on one of Options.AllowedOrigins; it is fetched
// without credentials, its redirects must keep scheme and origin, a
// Content-Length over the limit is refused before the body is read, and the
// body is read through a limited reader and must end cleanly before the
// timeout (a body that the deadline or ctx cut is refused with
// ReasonTimeout, even when the transport reported a clean end). Then the type is detected from the
// magic bytes and must be allowed and agree with every type declared (the
// icon's mimeType, the response's Content-Type or the data: media type,
// unless generic such as application/octet-stream); the dimensions and
// frames that the header declares must be within limits; an SVG is
// sanitized. Every refusal is an [*Error].
func (f *Fetcher) Fetch(ctx context.Context, ic mcp.Icon, serverURL string) (*Image, error) {
	if err := Validate(ic); err != nil {
		return nil, err
	}
	if strings.EqualFold(ic.Src[:5], "data:") {
		return f.fetchData(ic)
	}
	u, err := parseHTTPS(ic.Src)
	if err != nil {
		return nil, err
	}
	if err := f.checkOrigin(u, serverURL); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Error{Reason: ReasonURL, Field: "src", Err: err}
	}
	req.Header.Set("Accept", f.accept)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, refuse(ReasonStatus, "%s", resp.Status)
	}
	if resp.ContentLength > f.opts.MaxBytes {
		return nil, refuse(ReasonTooLarge, "Content-Length %d exceeds %d bytes", resp.ContentLength, f.opts.MaxBytes)
	}
	// A body cut by the deadline can end in a clean EOF: httpbody.Read
	// refuses it whatever the read returned (#16.6).
	body, err := httpbody.Read(ctx, resp, f.opts.MaxBytes)
	if errors.Is(err, httpbody.ErrTooLarge) {
		return nil, refuse(ReasonTooLarge, "body exceeds %d bytes", f.opts.MaxBytes)
	}
	if err != nil {
		return nil, classify(ctx, err)
	}
	return f.check(body, declared{"mimeType", ic.MIMEType}, declared{"Content-Type", resp.Header.Get("Content-Type")})
}

func (f *Fetcher) checkOrigin(u *url.URL, serverURL string) error {
	origin, err := originOf(u)
	if err != nil {
		return &Error{Reason: ReasonURL, Field: "src", Err: err}
	}
	if f.origins[origin] {
		return nil
	}
	if serverURL == "" {
		return fieldError(ReasonOrigin, "src", "%s: the server has no origin and the origin is not allowed", origin)
	}
	server, err := Origin(serverURL)
	if err != nil {
		return &Error{Reason: ReasonOrigin, Detail: "server URL has no origin", Err: err}
	}
	if origin != server {
		return fieldError(ReasonOrigin, "src", "%s is not the server's origin %s", origin, server)
	}
	return nil
}

// classify turns a transport error into an *Error.
func classify(ctx context.Context, err error) error {
	var ie *Error
	if errors.As(err, &ie) {
		return ie
	}
	var ne net.Error
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		(errors.As(err, &ne) && ne.Timeout()) {
		return &Error{Reason: ReasonTimeout, Err: err}
	}
	return &Error{Reason: ReasonNetwork, Err: err}
}

func (f *Fetcher) fetchData(ic mcp.Icon) (*Image, error) {
	d, err := parseDataURI(ic.Src)
	if err != nil {
		return nil, err
	}
	text := d.data
	if strings.Contains(text, "%") {
		if text, err = url.PathUnescape(text); err != nil {
			return nil, &Error{Reason: ReasonURL, Field: "src", Detail: "data: URI escapes", Err: err}
		}
	}
	// DecodedLen overestimates by at most 2 bytes of padding.
	if int64(base64.StdEncoding.DecodedLen(len(text)))-2 > f.opts.MaxBytes {
		return nil, refuse(ReasonTooLarge, "data: URI holds more than %d bytes", f.opts.MaxBytes)
	}
	enc := base64.StdEncoding
	if !strings.HasSuffix(text, "=") && len(text)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	data, err := enc.DecodeString(text)
	if err != nil {
		return nil, &Error{Reason: ReasonURL, Field: "src", Detail: "data: URI base64", Err: err}
	}
	if int64(len(data)) > f.opts.MaxBytes {
		return nil, refuse(ReasonTooLarge, "data: URI holds more than %d bytes", f.opts.MaxBytes)
	}
	return f.check(data, declared{"mimeType", ic.MIMEType}, declared{"data: media type", d.mediaType})
}

// declared is a type that some source claims for the bytes.
type declared struct{ source, value string }

// check sniffs data and applies the allowlist, the declared types and the
// limits.
func (f *Fetcher) check(data []byte, claims ...declared) (*Image, error) {
	info, err := Sniff(data)
	if err != nil {
		return nil, err
	}
	switch info.MIMEType {
	case TypeWebP:
		if !f.opts.AllowWebP {
			return nil, refuse(ReasonType, "WebP is not allowed")
		}
	case TypeSVG:
		if !f.opts.AllowSVG {
			return nil, refuse(ReasonSVG, "SVG is not allowed")
		}
	}
	for _, c := range claims {
		if !typeAgrees(c.value, info.MIMEType) {
			e := refuse(ReasonTypeMismatch, "%s %q but the bytes are %s", c.source, truncate(c.value), info.MIMEType)
			if c.source == "mimeType" {
				e.Field = "mimeType"
			}
			return nil, e
		}
	}
	if info.MIMEType == TypeSVG {
		if data, err = SanitizeSVG(data); err != nil {
			return nil, err
		}
		if info, err = sniffSVG(data); err != nil {
			return nil, &Error{Reason: ReasonSVG, Detail: "sanitized SVG", Err: err}
		}
	}
	if info.Width > f.opts.MaxWidth || info.Height > f.opts.MaxHeight {
		return nil, refuse(ReasonDimensions, "%dx%d exceeds %dx%d", info.Width, info.Height, f.opts.MaxWidth, f.opts.MaxHeight)
	}
	if info.Frames > f.opts.MaxFrames {
		return nil, refuse(ReasonFrames, "%d frames exceed %d", info.Frames, f.opts.MaxFrames)
	}
	return &Image{MIMEType: info.MIMEType, Data: data, Width: info.Width, Height: info.Height, Frames: info.Frames}, nil
}

// typeAgrees reports whether the declared media type claim (possibly with
// parameters) agrees with the sniffed type. Empty and generic types agree
// with everything; application/xml and text/xml agree with SVG.
func typeAgrees(claim, sniffed string) bool {
	if strings.TrimSpace(claim) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(claim)
	if err != nil {
		return false
	}
	switch mt {
	case "application/octet-stream", "binary/octet-stream", "application/unknown", "text/plain":
		return true
	case "image/jpg", "image/pjpeg":
		mt = TypeJPEG
	case "application/xml", "text/xml":
		mt = TypeSVG
	}
	return mt == sniffed
}
