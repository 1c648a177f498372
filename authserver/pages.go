package authserver

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/oauth"
)

// The pages carry no script at all, inline or not, and the CSP says so.
var pages = template.Must(template.New("pages").Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title><link rel="stylesheet" href="{{.Style}}"></head><body><main>{{end}}

{{define "app"}}<section class="app">
<p class="label">Application</p>
<h1 id="client-name">{{.ClientName}}</h1>
<p class="label">will be sent back to</p>
<p id="redirect-host" class="host">{{.RedirectHost}}</p>
{{if .ClientIDHost}}<p class="small">Identified by a document on <strong id="client-id-host">{{.ClientIDHost}}</strong></p>{{end}}
{{if .LocalOnly}}<p id="local-warning" class="warning">This application runs on a computer, not on a website: it can only send you back to an address on this computer. Allow it only if you just started it yourself.</p>{{end}}
</section>{{end}}

{{define "login"}}{{template "head" .}}
{{template "app" .}}
<h2>Sign in to continue</h2>
{{if .Error}}<p id="login-error" class="error">{{.Error}}</p>{{end}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<input type="hidden" name="request" value="{{.Request}}">
<label>User name <input id="username" name="username" autocomplete="username" required></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password" required></label>
<button id="login" name="action" value="login" type="submit">Sign in</button>
</form></main></body></html>{{end}}

{{define "consent"}}{{template "head" .}}
{{template "app" .}}
<h2>wants to access {{.Resource}} as <span id="who">{{.Subject}}</span></h2>
{{if .Scopes}}<ul id="scopes">{{range .Scopes}}<li>{{.}}</li>{{end}}</ul>{{else}}<p>No particular permissions were requested.</p>{{end}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<input type="hidden" name="request" value="{{.Request}}">
<button id="deny" name="action" value="deny" type="submit" class="secondary">Deny</button>
<button id="allow" name="action" value="allow" type="submit">Allow</button>
</form></main></body></html>{{end}}

{{define "upconsent"}}{{template "head" .}}
{{template "app" .}}
<p class="label">exact address it will be sent back to</p>
<p id="redirect-uri" class="small"><code>{{.RedirectURI}}</code></p>
<h2>wants to access {{.Resource}} as <span id="who">{{.Subject}}</span></h2>
{{if .Scopes}}<ul id="scopes">{{range .Scopes}}<li>{{.}}</li>{{end}}</ul>{{else}}<p>No particular permissions were requested.</p>{{end}}
<p>If you allow it, you will sign in at <strong id="upstream-host">{{.UpstreamHost}}</strong>{{if .UpstreamScopes}}, which will be asked for <span id="upstream-scopes">{{range $i, $s := .UpstreamScopes}}{{if $i}}, {{end}}{{$s}}{{end}}</span>{{end}}. Only allow applications you started yourself.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<input type="hidden" name="request" value="{{.Request}}">
<button id="deny" name="action" value="deny" type="submit" class="secondary">Deny</button>
<button id="allow" name="action" value="allow" type="submit">Allow</button>
</form></main></body></html>{{end}}

{{define "error"}}{{template "head" .}}
<h1>This request cannot go on</h1>
<p>error: <code id="error">{{.Code}}</code></p>
<p id="error-description">{{.Error}}</p>
<p>Nothing was sent to the application. Close this page and try again from the application.</p>
</main></body></html>{{end}}
`))

const consentCSS = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:28rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:.75rem;box-shadow:0 1px 4px #0002}
.label{color:#5a6270;font-size:.85rem;margin:.2rem 0}.host{font-size:1.6rem;font-weight:700;margin:.2rem 0 1rem}
h1{margin:.2rem 0 1rem}h2{font-size:1.05rem}.small{font-size:.85rem;color:#5a6270}
.warning{background:#fff4d6;border:1px solid #e8c15a;padding:.6rem;border-radius:.4rem}
.error{color:#a4161a}label{display:block;margin:.6rem 0}input{display:block;width:100%;padding:.4rem;box-sizing:border-box}
button{margin:.8rem .4rem 0 0;padding:.55rem 1.2rem;border-radius:.4rem;border:0;background:#2458d6;color:#fff;font-size:1rem}
button.secondary{background:#e3e6ec;color:#1d2330}code{background:#eee;padding:0 .3rem}`

func serveStyle(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write([]byte(consentCSS))
}

type pageData struct {
	Title, Style, Action, CSRF, Request, Error, Code string
	ClientName, RedirectHost, ClientIDHost           string
	Resource, Subject                                string
	RedirectURI, UpstreamHost                        string
	Scopes, UpstreamScopes                           []string
	LocalOnly                                        bool
}

// makeVisible passes every string the page shows through visible, so that
// a control, invisible or text-direction character shows as an escape
// (\u202E) instead of acting on the text around it.
func (d *pageData) makeVisible() {
	for _, p := range []*string{&d.Title, &d.Error, &d.Code, &d.ClientName, &d.RedirectHost,
		&d.ClientIDHost, &d.Resource, &d.Subject, &d.RedirectURI, &d.UpstreamHost} {
		*p = visible(*p)
	}
	d.Scopes = visibleAll(d.Scopes)
	d.UpstreamScopes = visibleAll(d.UpstreamScopes)
}

func visibleAll(in []string) []string {
	out := make([]string, len(in))
	for i, sc := range in {
		out[i] = visible(sc)
	}
	return out
}

// securityHeaders sets the headers every page carries. formTarget is the
// origin the forms may end up at (the redirect URI's), since browsers
// apply form-action to the redirect that follows a form post.
func (s *Server) securityHeaders(w http.ResponseWriter, formTarget string) {
	h := w.Header()
	fa := "'self'"
	if formTarget != "" {
		fa += " " + formTarget
	}
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action "+fa+
		"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: with no-referrer browsers send
	// "Origin: null" on the form posts, which the origin check refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}

func (s *Server) showPage(w http.ResponseWriter, r *http.Request, status int, ar *authRequest, q url.Values, page, subject, loginError string) {
	ru, _ := url.Parse(ar.redirectURI)
	d := pageData{
		Title: "Authorize " + ar.client.Metadata.ClientName, Style: s.prefix + pathStyle,
		Action: s.prefix + pathAuthorize, CSRF: s.csrfToken(w, r), Request: s.sealRequest(q),
		Error: loginError, ClientName: ar.client.Metadata.ClientName, RedirectHost: ru.Host,
		Resource: ar.resource, Subject: subject, Scopes: ar.scopes,
		LocalOnly: len(ar.client.Metadata.RedirectURIs) > 0, RedirectURI: ar.redirectURI,
	}
	if s.upstream != nil {
		if u, err := url.Parse(s.upstream.cfg.Issuer); err == nil {
			d.UpstreamHost = u.Host
		}
		d.UpstreamScopes = s.upstream.cfg.Scopes
	}
	if d.Subject == "" {
		d.Subject = "you"
	}
	if d.ClientName == "" {
		d.ClientName = ar.client.ID()
	}
	if oauth.IsURLClientID(ar.client.ID()) {
		if u, err := url.Parse(ar.client.ID()); err == nil {
			d.ClientIDHost = u.Host
		}
	}
	for _, reg := range ar.client.Metadata.RedirectURIs {
		if !oauth.IsLoopbackRedirect(reg) {
			d.LocalOnly = false
		}
	}
	d.makeVisible()
	target := ru.Scheme + "://" + ru.Host
	if s.upstream != nil {
		// Browsers apply form-action to the redirect that follows the
		// post: "allow" goes on to the provider's authorization endpoint.
		if m, err := s.upstream.metadata(r.Context()); err == nil {
			if au, err := url.Parse(m.AuthorizationEndpoint); err == nil {
				target += " " + au.Scheme + "://" + au.Host
			}
		}
	}
	s.securityHeaders(w, target)
	w.WriteHeader(status)
	_ = pages.ExecuteTemplate(w, page, d)
}

// showError shows an error the user must see because it cannot be sent to
// the redirect URI.
func (s *Server) showError(w http.ResponseWriter, r *http.Request, status int, oe *oauthError) {
	s.log.Info("authorization error shown", "error", string(oe.code), "description", oe.desc, "path", r.URL.Path)
	s.securityHeaders(w, "")
	w.WriteHeader(status)
	desc := oe.desc
	if len(desc) > 300 {
		// Cut on a character boundary, not inside one.
		n := 300
		for n > 0 && !utf8.RuneStart(desc[n]) {
			n--
		}
		desc = desc[:n] + "…"
	}
	d := pageData{Title: "Authorization error", Style: s.prefix + pathStyle,
		Code: string(oe.code), Error: strings.TrimSpace(desc)}
	d.makeVisible()
	_ = pages.ExecuteTemplate(w, "error", d)
}
