package icon

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// recorded is what a test server saw of one request.
type recorded struct {
	path      string
	header    http.Header
	peerCerts int
}

// recorder records the requests that reach a server.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rr := recorded{path: r.URL.Path, header: r.Header.Clone()}
		if r.TLS != nil {
			rr.peerCerts = len(r.TLS.PeerCertificates)
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, rr)
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rec *recorder) all() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.reqs...)
}

// newTLS starts a TLS server on 127.0.0.1 that records its requests.
func newTLS(t *testing.T, h http.Handler) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	s := httptest.NewUnstartedServer(rec.wrap(h))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut short by the tests
	s.StartTLS()
	t.Cleanup(s.Close)
	return s, rec
}

// newFetcher returns a Fetcher whose transport trusts the test servers.
func newFetcher(t *testing.T, s *httptest.Server, opts Options) *Fetcher {
	t.Helper()
	if opts.BaseTransport == nil {
		opts.BaseTransport = s.Client().Transport.(*http.Transport)
	}
	f, err := NewFetcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// serve answers with body and the Content-Type ctype ("-" for none).
func serve(body []byte, ctype string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ctype == "-" {
			w.Header()["Content-Type"] = nil
		} else {
			w.Header().Set("Content-Type", ctype)
		}
		w.Write(body)
	}
}

func redirect(to string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, http.StatusFound)
	}
}

const evilSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" onload="alert(1)"><script>alert(2)</script><circle r="5"/></svg>`

func TestFetchHTTPS(t *testing.T) {
	pngData := testPNG(t, 20, 10)
	jpegData := testJPEG(t, 30, 15)
	mux := http.NewServeMux()
	mux.Handle("/icon.png", serve(pngData, "image/png"))
	mux.Handle("/icon.jpg", serve(jpegData, "image/jpeg"))
	mux.Handle("/jpg-alias", serve(jpegData, "image/jpg; charset=binary"))
	mux.Handle("/generic", serve(pngData, "application/octet-stream"))
	mux.Handle("/no-type", serve(pngData, "-"))
	mux.Handle("/png-as-jpeg", serve(pngData, "image/jpeg"))
	mux.Handle("/huge", serve(hugePNG(100000, 100000), "image/png"))
	mux.Handle("/wide", serve(hugePNG(1025, 1), "image/png"))
	mux.Handle("/apng", serve(apng(50), "image/png"))
	mux.Handle("/webp", serve(webpLossless(64, 64), "image/webp"))
	mux.Handle("/anim.webp", serve(webpAnimated(64, 64, 7), "image/webp"))
	mux.Handle("/evil.svg", serve([]byte(evilSVG), "image/svg+xml"))
	mux.Handle("/xml.svg", serve([]byte(evilSVG), "text/xml"))
	mux.Handle("/svg-as-png", serve([]byte(evilSVG), "image/png"))
	mux.Handle("/doctype.svg", serve([]byte(`<!DOCTYPE svg [<!ENTITY a "b">]><svg>&a;</svg>`), "image/svg+xml"))
	mux.Handle("/huge.svg", serve([]byte(`<svg width="5000" height="10"/>`), "image/svg+xml"))
	mux.Handle("/gif", serve([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "image/gif"))
	mux.Handle("/html", serve([]byte("<html><body>hi</body></html>"), "text/html"))
	mux.Handle("/missing", http.NotFoundHandler())
	mux.Handle("/redirect-ok", redirect("/icon.png"))
	for i := 1; i <= 4; i++ {
		mux.Handle("/chain"+strconv.Itoa(i), redirect("/chain"+strconv.Itoa(i+1)))
	}
	mux.Handle("/chain5", serve(pngData, "image/png"))
	mux.Handle("/loop-a", redirect("/loop-b"))
	mux.Handle("/loop-b", redirect("/loop-a"))
	mux.Handle("/self", redirect("/self#again"))
	s, _ := newTLS(t, mux)
	mux.Handle("/cred-redirect", redirect("https://user:pw@"+strings.TrimPrefix(s.URL, "https://")+"/icon.png"))

	tests := []struct {
		name     string
		path     string
		mimeType string
		opts     Options
		reason   Reason // "" for success
		want     Info
	}{
		{name: "png", path: "/icon.png", want: Info{TypePNG, 20, 10, 1}},
		{name: "jpeg", path: "/icon.jpg", want: Info{TypeJPEG, 30, 15, 1}},
		{name: "image/jpg alias", path: "/jpg-alias", want: Info{TypeJPEG, 30, 15, 1}},
		{name: "generic content type", path: "/generic", want: Info{TypePNG, 20, 10, 1}},
		{name: "no content type", path: "/no-type", want: Info{TypePNG, 20, 10, 1}},
		{name: "mimeType fills in generic type", path: "/generic", mimeType: "image/png", want: Info{TypePNG, 20, 10, 1}},
		{name: "png served as jpeg", path: "/png-as-jpeg", reason: ReasonTypeMismatch},
		{name: "png declared jpeg", path: "/icon.png", mimeType: "image/jpeg", reason: ReasonTypeMismatch},
		{name: "png declared jpeg over generic type", path: "/generic", mimeType: "image/jpeg", reason: ReasonTypeMismatch},
		{name: "header claims 100000x100000", path: "/huge", reason: ReasonDimensions},
		{name: "one pixel too wide", path: "/wide", reason: ReasonDimensions},
		{name: "wide within raised limit", path: "/wide", opts: Options{MaxWidth: 2000}, want: Info{TypePNG, 1025, 1, 1}},
		{name: "many-frame apng", path: "/apng", reason: ReasonFrames},
		{name: "apng within raised limit", path: "/apng", opts: Options{MaxFrames: 50}, want: Info{TypePNG, 16, 16, 50}},
		{name: "webp not allowed", path: "/webp", reason: ReasonType},
		{name: "webp allowed", path: "/webp", opts: Options{AllowWebP: true}, want: Info{TypeWebP, 64, 64, 1}},
		{name: "animated webp", path: "/anim.webp", opts: Options{AllowWebP: true}, reason: ReasonFrames},
		{name: "svg refused by default", path: "/evil.svg", reason: ReasonSVG},
		{name: "svg sanitized", path: "/evil.svg", opts: Options{AllowSVG: true}, want: Info{TypeSVG, 32, 32, 1}},
		{name: "svg as text/xml", path: "/xml.svg", opts: Options{AllowSVG: true}, want: Info{TypeSVG, 32, 32, 1}},
		{name: "svg served as png", path: "/svg-as-png", opts: Options{AllowSVG: true}, reason: ReasonTypeMismatch},
		{name: "svg with doctype", path: "/doctype.svg", opts: Options{AllowSVG: true}, reason: ReasonSVG},
		{name: "svg too wide", path: "/huge.svg", opts: Options{AllowSVG: true}, reason: ReasonDimensions},
		{name: "gif", path: "/gif", reason: ReasonType},
		{name: "html", path: "/html", reason: ReasonType},
		{name: "not found", path: "/missing", reason: ReasonStatus},
		{name: "same-origin redirect", path: "/redirect-ok", want: Info{TypePNG, 20, 10, 1}},
		{name: "redirects not followed", path: "/redirect-ok", opts: Options{MaxRedirects: -1}, reason: ReasonRedirect},
		{name: "four redirects", path: "/chain1", reason: ReasonRedirect},
		{name: "four redirects allowed", path: "/chain1", opts: Options{MaxRedirects: 4}, want: Info{TypePNG, 20, 10, 1}},
		{name: "three redirects", path: "/chain2", want: Info{TypePNG, 20, 10, 1}},
		{name: "redirect loop", path: "/loop-a", opts: Options{MaxRedirects: 10}, reason: ReasonRedirect},
		{name: "redirect to itself", path: "/self", reason: ReasonRedirect},
		{name: "redirect with credentials", path: "/cred-redirect", reason: ReasonRedirect},
		{name: "body at the limit", path: "/icon.png", opts: Options{MaxBytes: int64(len(pngData))}, want: Info{TypePNG, 20, 10, 1}},
		{name: "body one byte over", path: "/icon.png", opts: Options{MaxBytes: int64(len(pngData) - 1)}, reason: ReasonTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFetcher(t, s, tt.opts)
			img, err := f.Fetch(context.Background(), mcp.Icon{Src: s.URL + tt.path, MIMEType: tt.mimeType}, s.URL+"/mcp")
			if tt.reason != "" {
				wantReason(t, err, tt.reason)
				if img != nil {
					t.Errorf("image %v with error", img)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			got := Info{img.MIMEType, img.Width, img.Height, img.Frames}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if img.MIMEType == TypeSVG {
				checkSafeSVG(t, img.Data)
				if bytes.Contains(img.Data, []byte("script")) || bytes.Contains(img.Data, []byte("onload")) {
					t.Errorf("sanitized SVG keeps script or onload: %s", img.Data)
				}
			} else if _, err := Sniff(img.Data); err != nil {
				t.Errorf("returned data does not sniff: %v", err)
			}
		})
	}
}

func TestFetchLoopMessage(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/a", redirect("/b"))
	mux.Handle("/b", redirect("/a"))
	s, _ := newTLS(t, mux)
	_, err := newFetcher(t, s, Options{MaxRedirects: 10}).Fetch(context.Background(), mcp.Icon{Src: s.URL + "/a"}, s.URL)
	wantReason(t, err, ReasonRedirect)
	if !strings.Contains(err.Error(), "loop") {
		t.Errorf("err = %v, want a loop", err)
	}
}

func TestFetchAccept(t *testing.T) {
	s, rec := newTLS(t, serve(testPNG(t, 1, 1), "image/png"))
	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{}, "image/png,image/jpeg"},
		{Options{AllowWebP: true, AllowSVG: true}, "image/png,image/jpeg,image/webp,image/svg+xml"},
	} {
		if _, err := newFetcher(t, s, tt.opts).Fetch(context.Background(), mcp.Icon{Src: s.URL + "/i"}, s.URL); err != nil {
			t.Fatal(err)
		}
		reqs := rec.all()
		if got := reqs[len(reqs)-1].header.Get("Accept"); got != tt.want {
			t.Errorf("Accept = %q, want %q", got, tt.want)
		}
	}
}

func TestFetchRefusedSchemes(t *testing.T) {
	s, rec := newTLS(t, serve(testPNG(t, 1, 1), "image/png"))
	plainRec := &recorder{}
	plain := httptest.NewServer(plainRec.wrap(serve(testPNG(t, 1, 1), "image/png")))
	defer plain.Close()
	host := strings.TrimPrefix(s.URL, "https://")
	f := newFetcher(t, s, Options{AllowSVG: true, AllowWebP: true})
	for _, src := range []string{
		"javascript:alert(1)",
		"JavaScript:alert(1)",
		"file:///etc/passwd",
		"FILE:///etc/passwd",
		"ftp://" + host + "/icon.png",
		"ws://" + host + "/icon.png",
		"wss://" + host + "/icon.png",
		"http://" + host + "/icon.png",
		plain.URL + "/icon.png",
		"vscode://file/icon.png",
		"chrome-extension://abc/icon.png",
		"about:blank",
		"//" + host + "/icon.png",
	} {
		_, err := f.Fetch(context.Background(), mcp.Icon{Src: src}, s.URL)
		e := wantReason(t, err, ReasonScheme)
		if e.Field != "src" {
			t.Errorf("%s: Field = %q", src, e.Field)
		}
	}
	// Upper-case https is the same scheme.
	if _, err := f.Fetch(context.Background(), mcp.Icon{Src: "HTTPS://" + host + "/icon.png"}, s.URL); err != nil {
		t.Errorf("HTTPS: %v", err)
	}
	if n := len(rec.all()); n != 1 {
		t.Errorf("TLS server got %d requests, want 1", n)
	}
	if n := len(plainRec.all()); n != 0 {
		t.Errorf("plain server got %d requests, want 0", n)
	}
}

func TestFetchOrigin(t *testing.T) {
	pngData := testPNG(t, 4, 4)
	b, recB := newTLS(t, serve(pngData, "image/png"))
	muxA := http.NewServeMux()
	muxA.Handle("/icon.png", serve(pngData, "image/png"))
	muxA.Handle("/to-b", redirect(b.URL+"/icon.png"))
	a, _ := newTLS(t, muxA)
	ctx := context.Background()

	f := newFetcher(t, a, Options{})
	allowB := newFetcher(t, a, Options{AllowedOrigins: []string{b.URL + "/"}})
	upper := strings.Replace(a.URL, "https://", "HTTPS://", 1)
	// The rows run in order: wantB counts the requests server B has had
	// once the row is done.
	for _, tc := range []struct {
		name   string
		f      *Fetcher
		src    string
		server string // the MCP server's URL; "" for a stdio server
		want   Reason // "" for a fetched icon
		wantB  int
	}{
		{"icon on another origin than the server's", f, b.URL + "/icon.png", a.URL + "/mcp", ReasonOrigin, 0},
		{"cross-origin redirect", f, a.URL + "/to-b", a.URL + "/mcp", ReasonRedirect, 0},
		{"server URL without origin", f, a.URL + "/icon.png", "not a url", ReasonOrigin, 0},
		{"the server's origin spelled otherwise", f, a.URL + "/icon.png", upper + "/mcp?x=1", "", 0},
		// Stdio server: data: only, unless the origin is configured.
		{"https for a stdio server", f, a.URL + "/icon.png", "", ReasonOrigin, 0},
		{"data: for a stdio server", f, toDataURI("image/png", pngData), "", "", 0},
		{"allowed origin for a stdio server", allowB, b.URL + "/icon.png", "", "", 1},
		{"allowed origin besides the server's", allowB, b.URL + "/icon.png", a.URL, "", 2},
		{"allowing B allows no redirect from A to B", allowB, a.URL + "/to-b", a.URL, ReasonRedirect, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.f.Fetch(ctx, mcp.Icon{Src: tc.src}, tc.server)
			if tc.want != "" {
				wantReason(t, err, tc.want)
			} else if err != nil {
				t.Errorf("Fetch: %v", err)
			}
			if n := len(recB.all()); n != tc.wantB {
				t.Errorf("server B got %d requests, want %d", n, tc.wantB)
			}
		})
	}
}

func TestFetchSchemeDowngradeRedirect(t *testing.T) {
	plainRec := &recorder{}
	plain := httptest.NewServer(plainRec.wrap(serve(testPNG(t, 1, 1), "image/png")))
	defer plain.Close()
	// Same host and port spelled for http: only the scheme changes.
	s, _ := newTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/icon.png", http.StatusMovedPermanently)
	}))
	_, err := newFetcher(t, s, Options{}).Fetch(context.Background(), mcp.Icon{Src: s.URL + "/icon.png"}, s.URL)
	e := wantReason(t, err, ReasonRedirect)
	if !strings.Contains(e.Detail, "scheme") {
		t.Errorf("detail %q does not name the scheme", e.Detail)
	}
	if n := len(plainRec.all()); n != 0 {
		t.Errorf("http server got %d requests", n)
	}
}

func TestFetchNoCredentials(t *testing.T) {
	pngData := testPNG(t, 2, 2)
	mux := http.NewServeMux()
	mux.Handle("/probe", serve(pngData, "image/png"))
	mux.Handle("/icon.png", serve(pngData, "image/png"))
	mux.HandleFunc("/set-cookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "fresh", Value: "1", Path: "/"})
		http.Redirect(w, r, "/icon.png", http.StatusFound)
	})
	s, rec := newTLS(t, mux)
	base := s.Client().Transport.(*http.Transport)

	// The caller's default client has a jar holding a cookie for the server
	// and trusts the test certificate.
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(s.URL)
	jar.SetCookies(u, []*http.Cookie{{Name: "session", Value: "secret", Path: "/"}})
	oldJar, oldTransport := http.DefaultClient.Jar, http.DefaultClient.Transport
	http.DefaultClient.Jar, http.DefaultClient.Transport = jar, base
	t.Cleanup(func() { http.DefaultClient.Jar, http.DefaultClient.Transport = oldJar, oldTransport })

	// Control: the default client does send the cookie.
	resp, err := http.Get(s.URL + "/probe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := rec.all()[0].header.Get("Cookie"); got != "session=secret" {
		t.Fatalf("control request Cookie = %q; the test cannot tell", got)
	}

	f := newFetcher(t, s, Options{BaseTransport: base})
	ctx := context.Background()
	if _, err := f.Fetch(ctx, mcp.Icon{Src: s.URL + "/set-cookie"}, s.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fetch(ctx, mcp.Icon{Src: s.URL + "/icon.png"}, s.URL); err != nil {
		t.Fatal(err)
	}
	// Credentials in the URL are refused before any request.
	host := strings.TrimPrefix(s.URL, "https://")
	_, err = f.Fetch(ctx, mcp.Icon{Src: "https://user:pw@" + host + "/icon.png"}, s.URL)
	wantReason(t, err, ReasonURL)

	reqs := rec.all()[1:]
	if len(reqs) != 3 {
		t.Fatalf("server got %d fetcher requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		for _, h := range []string{"Cookie", "Authorization", "Proxy-Authorization"} {
			if v := r.header.Values(h); len(v) > 0 {
				t.Errorf("%s carried %s: %q", r.path, h, v)
			}
		}
	}
}

func TestNoCredentialsTransport(t *testing.T) {
	s, rec := newTLS(t, serve(nil, "image/png"))
	rt := &noCredentials{base: s.Client().Transport}
	u, _ := url.Parse(s.URL + "/x")
	u.User = url.UserPassword("user", "pw")
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	req.Header.Set("Authorization", "Bearer token")
	req.Header.Set("Cookie", "a=b")
	req.Header.Set("Proxy-Authorization", "Basic eA==")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := rec.all()[0].header
	for _, name := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
		if h.Get(name) != "" {
			t.Errorf("%s reached the server: %q", name, h.Get(name))
		}
	}
	if req.Header.Get("Authorization") == "" || req.URL.User == nil {
		t.Error("the caller's request was modified")
	}
}

func TestFetchNoClientCertificate(t *testing.T) {
	rec := &recorder{}
	s := httptest.NewUnstartedServer(rec.wrap(serve(testPNG(t, 2, 2), "image/png")))
	s.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	s.StartTLS()
	defer s.Close()
	base := s.Client().Transport.(*http.Transport).Clone()
	base.TLSClientConfig.Certificates = s.TLS.Certificates

	// Control: the base transport presents the certificate.
	resp, err := (&http.Client{Transport: base}).Get(s.URL + "/probe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := rec.all()[0].peerCerts; n == 0 {
		t.Fatal("control request presented no certificate; the test cannot tell")
	}

	f := newFetcher(t, s, Options{BaseTransport: base})
	if _, err := f.Fetch(context.Background(), mcp.Icon{Src: s.URL + "/icon.png"}, s.URL); err != nil {
		t.Fatal(err)
	}
	if n := rec.all()[1].peerCerts; n != 0 {
		t.Errorf("fetcher presented %d client certificates", n)
	}
	if len(base.TLSClientConfig.Certificates) == 0 {
		t.Error("NewFetcher modified the base transport")
	}
}

func TestFetchLargeBody(t *testing.T) {
	const total = 50 << 20
	for _, withLength := range []bool{true, false} {
		t.Run(fmt.Sprintf("Content-Length=%v", withLength), func(t *testing.T) {
			var written atomic.Int64
			done := make(chan struct{})
			var once sync.Once
			s, _ := newTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer once.Do(func() { close(done) })
				w.Header().Set("Content-Type", "image/png")
				if withLength {
					w.Header().Set("Content-Length", strconv.Itoa(total))
				}
				chunk := make([]byte, 64<<10)
				copy(chunk, testPNG(t, 1, 1))
				for written.Load() < total {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}))
			_, err := newFetcher(t, s, Options{}).Fetch(context.Background(), mcp.Icon{Src: s.URL + "/big.png"}, s.URL)
			e := wantReason(t, err, ReasonTooLarge)
			if withLength && !strings.Contains(e.Detail, "Content-Length") {
				t.Errorf("detail %q: not refused on Content-Length", e.Detail)
			}
			<-done
			if n := written.Load(); n >= total {
				t.Errorf("server wrote all %d bytes", n)
			}
		})
	}
}

func TestFetchContext(t *testing.T) {
	arrived := make(chan struct{}, 1)
	s, _ := newTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	ic := mcp.Icon{Src: s.URL + "/slow.png"}

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-arrived; cancel() }()
		_, err := newFetcher(t, s, Options{}).Fetch(ctx, ic, s.URL)
		wantReason(t, err, ReasonTimeout)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("timeout option", func(t *testing.T) {
		_, err := newFetcher(t, s, Options{Timeout: time.Millisecond}).Fetch(context.Background(), ic, s.URL)
		wantReason(t, err, ReasonTimeout)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	})
}

// TestFetchBodyCutByDeadline sends a complete PNG and then keeps the chunked
// body open: the fetch deadline cuts it, and however the transport reports the
// cut (an error or, on some paths, a clean EOF), the truncated body must never
// come back as an icon (#16.6).
func TestFetchBodyCutByDeadline(t *testing.T) {
	pngData := testPNG(t, 2, 2)
	s, _ := newTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(pngData)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	f := newFetcher(t, s, Options{Timeout: 20 * time.Millisecond})
	ic := mcp.Icon{Src: s.URL + "/endless.png"}
	const runs = 200
	accepted := 0
	for range runs {
		img, err := f.Fetch(context.Background(), ic, s.URL)
		var e *Error
		switch {
		case err == nil:
			accepted++
			_ = img
		case !errors.As(err, &e) || e.Reason != ReasonTimeout:
			t.Fatalf("err = %v, want reason %s", err, ReasonTimeout)
		case !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	}
	if accepted > 0 {
		t.Errorf("%d of %d fetches cut by the deadline were accepted as icons", accepted, runs)
	}
}

func TestFetchNetworkError(t *testing.T) {
	s, _ := newTLS(t, serve(nil, "image/png"))
	f := newFetcher(t, s, Options{})
	src := s.URL + "/icon.png"
	s.Close()
	_, err := f.Fetch(context.Background(), mcp.Icon{Src: src}, src)
	wantReason(t, err, ReasonNetwork)
}

func TestFetchData(t *testing.T) {
	pngData := testPNG(t, 8, 6)
	jpegData := testJPEG(t, 9, 7)
	tests := []struct {
		name     string
		src      string
		mimeType string
		opts     Options
		reason   Reason
		want     Info
	}{
		{name: "png", src: toDataURI("image/png", pngData), want: Info{TypePNG, 8, 6, 1}},
		{name: "upper case", src: "DATA:IMAGE/PNG;BASE64," + strings.TrimPrefix(toDataURI("", pngData), "data:;base64,"), want: Info{TypePNG, 8, 6, 1}},
		{name: "jpeg as image/jpg", src: toDataURI("image/jpg", jpegData), want: Info{TypeJPEG, 9, 7, 1}},
		{name: "no media type", src: toDataURI("", pngData), want: Info{TypePNG, 8, 6, 1}},
		{name: "generic media type", src: toDataURI("application/octet-stream", pngData), want: Info{TypePNG, 8, 6, 1}},
		{name: "unpadded base64", src: strings.TrimRight(toDataURI("image/png", pngData), "="), want: Info{TypePNG, 8, 6, 1}},
		{name: "percent-escaped base64", src: "data:image/png;base64," + strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(base64.StdEncoding.EncodeToString(pngData)), want: Info{TypePNG, 8, 6, 1}},
		{name: "png as jpeg", src: toDataURI("image/jpeg", pngData), reason: ReasonTypeMismatch},
		{name: "mimeType disagrees", src: toDataURI("image/png", pngData), mimeType: "image/jpeg", reason: ReasonTypeMismatch},
		{name: "huge dimensions", src: toDataURI("image/png", hugePNG(100000, 100000)), reason: ReasonDimensions},
		{name: "many frames", src: toDataURI("image/png", apng(10)), reason: ReasonFrames},
		{name: "too large", src: toDataURI("image/png", pngData), opts: Options{MaxBytes: int64(len(pngData) - 1)}, reason: ReasonTooLarge},
		{name: "at the limit", src: toDataURI("image/png", pngData), opts: Options{MaxBytes: int64(len(pngData))}, want: Info{TypePNG, 8, 6, 1}},
		// Refused on size before decoding: the data is not even base64.
		{name: "too large before decoding", src: "data:image/png;base64," + strings.Repeat("!", 4000), opts: Options{MaxBytes: 1000}, reason: ReasonTooLarge},
		{name: "bad base64", src: "data:image/png;base64,!!!!", reason: ReasonURL},
		{name: "bad escape", src: "data:image/png;base64,%zz", reason: ReasonURL},
		{name: "not base64", src: "data:image/png,abc", reason: ReasonURL},
		{name: "svg refused", src: toDataURI("image/svg+xml", []byte(evilSVG)), reason: ReasonSVG},
		{name: "svg sanitized", src: toDataURI("image/svg+xml", []byte(evilSVG)), opts: Options{AllowSVG: true}, want: Info{TypeSVG, 32, 32, 1}},
		{name: "webp refused", src: toDataURI("image/webp", webpLossy(10, 10)), reason: ReasonType},
		{name: "webp allowed", src: toDataURI("image/webp", webpLossy(10, 10)), opts: Options{AllowWebP: true}, want: Info{TypeWebP, 10, 10, 1}},
		{name: "text", src: toDataURI("text/plain", []byte("hello")), reason: ReasonType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFetcher(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			img, err := f.Fetch(context.Background(), mcp.Icon{Src: tt.src, MIMEType: tt.mimeType}, "")
			if tt.reason != "" {
				wantReason(t, err, tt.reason)
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if got := (Info{img.MIMEType, img.Width, img.Height, img.Frames}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if img.MIMEType == TypeSVG {
				checkSafeSVG(t, img.Data)
			}
		})
	}
}

func TestFetchInvalidMetadata(t *testing.T) {
	f, err := NewFetcher(Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Fetch(context.Background(), mcp.Icon{Src: toDataURI("image/png", testPNG(t, 1, 1)), Theme: "sepia"}, "")
	if e := wantReason(t, err, ReasonInvalid); e.Field != "theme" {
		t.Errorf("Field = %q, want theme", e.Field)
	}
}

func TestNewFetcherAllowedOrigins(t *testing.T) {
	for _, bad := range []string{"http://example.com", "example.com", "", "https://", "%"} {
		if _, err := NewFetcher(Options{AllowedOrigins: []string{bad}}); err == nil {
			t.Errorf("AllowedOrigins %q accepted", bad)
		}
	}
	if _, err := NewFetcher(Options{AllowedOrigins: []string{"https://cdn.example:443/path"}}); err != nil {
		t.Errorf("https origin refused: %v", err)
	}
}

func BenchmarkFetchData(b *testing.B) {
	f, err := NewFetcher(Options{})
	if err != nil {
		b.Fatal(err)
	}
	ic := mcp.Icon{Src: toDataURI("image/png", testPNG(b, 64, 64))}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Fetch(context.Background(), ic, ""); err != nil {
			b.Fatal(err)
		}
	}
}
