package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/oauth"
)

// DefaultMaxBodyBytes bounds the part of a POST body the middleware reads
// to find the JSON-RPC method and the tool, resource or prompt named.
const DefaultMaxBodyBytes = 16 << 20

// DefaultMaxFormBytes bounds the form-encoded body the middleware reads,
// before the token is checked, to refuse a token sent in it.
const DefaultMaxFormBytes = 4 << 10

// ScopeStrategy chooses the scope set a 403 insufficient_scope challenge
// asks for, among the strategies of the MCP authorization specification.
// Whatever the strategy, the set always contains every scope the refused
// request needs, so a client that obtains it can retry successfully.
type ScopeStrategy int

const (
	// ScopeMinimum challenges with exactly the scopes the request needs:
	// those newly required and those already granted that it requires.
	ScopeMinimum ScopeStrategy = iota
	// ScopeRecommended adds the scopes already granted that this server
	// knows (Options.ScopesSupported), so that a client stepping up keeps
	// what it had.
	ScopeRecommended
	// ScopeExtended adds, to the recommended set, the scopes related to
	// those required (Options.RelatedScopes), anticipating the next
	// requests.
	ScopeExtended
)

// String returns "minimum", "recommended" or "extended".
func (s ScopeStrategy) String() string {
	switch s {
	case ScopeMinimum:
		return "minimum"
	case ScopeRecommended:
		return "recommended"
	case ScopeExtended:
		return "extended"
	}
	return fmt.Sprintf("ScopeStrategy(%d)", int(s))
}

// Options configure a [Middleware].
type Options struct {
	// Resource is the canonical URI of the protected MCP endpoint, such as
	// "https://mcp.example.com/mcp". Required.
	Resource string
	// ResourceMetadataURL is sent as resource_metadata in every
	// challenge. Empty means ResourceMetadataURL(Resource).
	ResourceMetadataURL string
	// Verifier checks access tokens. Required. Wrap it in a [Cache] unless
	// it caches itself.
	Verifier Verifier

	// Scopes are required for every request.
	Scopes []string
	// ChallengeScopes is the scope of a 401 challenge, which cannot depend
	// on the request (nothing of it is read before the token is valid).
	// Empty means Scopes, or ScopesSupported if Scopes is empty.
	ChallengeScopes []string

	// MethodScopes maps a JSON-RPC method, such as "tools/call", to the
	// scopes it requires in addition to Scopes.
	MethodScopes map[string][]string
	// ToolScopes maps a tool name to the scopes tools/call of it requires.
	ToolScopes map[string][]string
	// ResourceScopes maps a resource URI to the scopes resources/read,
	// resources/subscribe and resources/unsubscribe of it require (and
	// completion/complete with a reference to it). A key ending in "*"
	// matches every URI with the text before it as prefix.
	ResourceScopes map[string][]string
	// PromptScopes maps a prompt name to the scopes prompts/get of it
	// (and completion/complete with a reference to it) requires.
	PromptScopes map[string][]string

	// Strategy chooses the scope set of 403 challenges.
	Strategy ScopeStrategy
	// ScopesSupported are the scopes this server knows; with
	// ScopeRecommended and ScopeExtended, granted scopes outside it are not
	// repeated in challenges. Empty means every scope named in Scopes,
	// ChallengeScopes and the maps above.
	ScopesSupported []string
	// RelatedScopes maps a scope to others worth requesting with it, for
	// ScopeExtended.
	RelatedScopes map[string][]string

	// MaxBodyBytes bounds the POST body read to find the method and
	// names; a longer body gets 413. Zero means DefaultMaxBodyBytes. The
	// body is read only when per-method or per-name scopes are configured,
	// and only once the token is valid.
	MaxBodyBytes int64
	// MaxFormBytes bounds the application/x-www-form-urlencoded body read
	// before the token is checked, to refuse a token sent in it (RFC 6750
	// §2.2 is not supported): a longer form gets 413, and no more than
	// MaxFormBytes+1 bytes of it are read. Zero means DefaultMaxFormBytes.
	// An MCP endpoint takes JSON, so a form is never a legitimate request.
	MaxFormBytes int64

	// ExposeToken makes the raw access token available to handlers through
	// RawTokenFromContext. Leave it off: handlers have no sanctioned use
	// for it (see TokenExchange).
	ExposeToken bool

	// Logger receives verifier failures other than invalid tokens. Nil
	// means slog.Default().
	Logger *slog.Logger
}

// Middleware guards HTTP handlers with bearer tokens, as an OAuth resource
// server (RFC 6750, RFC 9728 §5.1, MCP authorization):
//
//   - a token in the query string (access_token) or in a form body is
//     refused with 400 invalid_request, even when a header is present;
//     more than one Authorization header, or a malformed Bearer value, is
//     refused the same way;
//   - no Bearer token: 401 with resource_metadata and scope;
//   - a token the verifier refuses (invalid, expired, another audience):
//     401 with error="invalid_token", error_description, resource_metadata
//     and scope;
//   - a valid token without the scopes the request needs: 403 with
//     error="insufficient_scope", the scope set of the strategy,
//     resource_metadata and error_description;
//   - a verifier failure (authorization server unreachable): 503.
//
// Nothing of the request but its Authorization header, its query string
// and (for form bodies, within Options.MaxFormBytes) its body is read
// before the token is valid, and the next handler is not called. Then the principal is stored in the
// request's context for the next handler (see PrincipalFromContext).
type Middleware struct {
	opts       Options
	metadata   string
	challenge  []string
	known      map[string]bool
	needsPeek  bool
	dec        *jsonrpc.Decoder // reads messages for the peek; never changed after New
	maxBody    int64
	maxForm    int64
	logger     *slog.Logger
	wildcardRS []string // ResourceScopes keys ending in "*", without it
}

// NewMiddleware checks opts and returns a middleware.
func NewMiddleware(opts Options) (*Middleware, error) {
	if opts.Verifier == nil {
		return nil, errors.New("auth: Options.Verifier is required")
	}
	res, err := oauth.CanonicalResource(opts.Resource)
	if err != nil {
		return nil, fmt.Errorf("auth: Options.Resource: %w", err)
	}
	opts.Resource = res
	m := &Middleware{opts: opts, metadata: opts.ResourceMetadataURL, maxBody: opts.MaxBodyBytes, maxForm: opts.MaxFormBytes, logger: opts.Logger}
	if m.metadata == "" {
		if m.metadata, err = ResourceMetadataURL(res); err != nil {
			return nil, err
		}
	}
	if m.maxBody <= 0 {
		m.maxBody = DefaultMaxBodyBytes
	}
	if m.maxForm <= 0 {
		m.maxForm = DefaultMaxFormBytes
	}
	if m.logger == nil {
		m.logger = slog.Default()
	}
	switch opts.Strategy {
	case ScopeMinimum, ScopeRecommended, ScopeExtended:
	default:
		return nil, fmt.Errorf("auth: unknown scope strategy %d", int(opts.Strategy))
	}
	m.challenge = opts.ChallengeScopes
	if len(m.challenge) == 0 {
		m.challenge = opts.Scopes
	}
	if len(m.challenge) == 0 {
		m.challenge = opts.ScopesSupported
	}
	m.known = make(map[string]bool)
	add := func(ss []string) {
		for _, s := range ss {
			m.known[s] = true
		}
	}
	if len(opts.ScopesSupported) > 0 {
		add(opts.ScopesSupported)
	} else {
		add(opts.Scopes)
		add(opts.ChallengeScopes)
		for _, mp := range []map[string][]string{opts.MethodScopes, opts.ToolScopes, opts.ResourceScopes, opts.PromptScopes} {
			for _, ss := range mp {
				add(ss)
			}
		}
	}
	for k := range opts.ResourceScopes {
		if p, ok := strings.CutSuffix(k, "*"); ok {
			m.wildcardRS = append(m.wildcardRS, p)
		}
	}
	m.needsPeek = len(opts.MethodScopes)+len(opts.ToolScopes)+len(opts.ResourceScopes)+len(opts.PromptScopes) > 0
	names := []string{"tools/call", "prompts/get", "resources/read", "resources/subscribe", "resources/unsubscribe", "completion/complete"}
	for name := range opts.MethodScopes {
		names = append(names, name)
	}
	m.dec = jsonrpc.NewDecoder(names...)
	return m, nil
}

// Wrap returns next guarded by m.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.serve(w, r, next)
	})
}

// ResourceMetadataURL returns the URL the challenges name.
func (m *Middleware) ResourceMetadataURL() string { return m.metadata }

func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	// Tokens anywhere but the header are refused, never accepted.
	if r.URL.RawQuery != "" {
		// ParseQuery keeps the pairs it could read when others are malformed.
		if q, _ := url.ParseQuery(r.URL.RawQuery); q.Has("access_token") {
			m.fail(w, http.StatusBadRequest, oauth.InvalidRequest, "access tokens are accepted in the Authorization header only", nil)
			return
		}
	}
	if isForm(r) {
		// Nothing of an unauthenticated request is buffered beyond the
		// small form bound.
		body, ok := m.readBody(w, r, m.maxForm)
		if !ok {
			return
		}
		if q, _ := url.ParseQuery(string(body)); q.Has("access_token") {
			m.fail(w, http.StatusBadRequest, oauth.InvalidRequest, "access tokens are accepted in the Authorization header only", nil)
			return
		}
	}
	hdrs := r.Header.Values("Authorization")
	if len(hdrs) > 1 {
		m.fail(w, http.StatusBadRequest, oauth.InvalidRequest, "more than one Authorization header", nil)
		return
	}
	if len(hdrs) == 0 {
		m.fail(w, http.StatusUnauthorized, "", "", m.challenge)
		return
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(hdrs[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		m.fail(w, http.StatusUnauthorized, "", "", m.challenge)
		return
	}
	token = strings.TrimLeft(token, " ")
	if !validToken68(token) {
		m.fail(w, http.StatusBadRequest, oauth.InvalidRequest, "malformed Bearer credentials", nil)
		return
	}
	p, err := m.opts.Verifier.Verify(r.Context(), token)
	if err != nil {
		var te *TokenError
		switch {
		case errors.As(err, &te):
			m.fail(w, http.StatusUnauthorized, oauth.InvalidToken, te.Reason, m.challenge)
		case errors.Is(err, ErrInvalidToken):
			m.fail(w, http.StatusUnauthorized, oauth.InvalidToken, "invalid token", m.challenge)
		default:
			m.logger.ErrorContext(r.Context(), "auth: token verification failed", "err", err)
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Retry-After", "5")
			http.Error(w, "token verification unavailable", http.StatusServiceUnavailable)
		}
		return
	}
	if p == nil {
		m.fail(w, http.StatusUnauthorized, oauth.InvalidToken, "invalid token", m.challenge)
		return
	}
	required := m.opts.Scopes
	if m.needsPeek && r.Method == http.MethodPost {
		body, ok := m.readBody(w, r, m.maxBody)
		if !ok {
			return
		}
		var err error
		if required, err = m.requestScopes(required, body); err != nil {
			m.fail(w, http.StatusBadRequest, oauth.InvalidRequest, strings.TrimPrefix(err.Error(), "auth: "), nil)
			return
		}
	}
	if missing := missingScopes(p.Scopes, required); len(missing) > 0 {
		m.fail(w, http.StatusForbidden, oauth.InsufficientScope,
			"the request needs scope "+oauth.JoinScope(missing), m.stepUpScopes(p.Scopes, required))
		return
	}
	ctx := ContextWithPrincipal(r.Context(), p)
	if m.opts.ExposeToken {
		ctx = contextWithRawToken(ctx, token)
	}
	next.ServeHTTP(w, r.WithContext(ctx))
}

// fail answers with status and a Bearer challenge.
func (m *Middleware) fail(w http.ResponseWriter, status int, code oauth.ErrorCode, desc string, scope []string) {
	c := oauth.BearerChallenge{ResourceMetadata: m.metadata, Scope: scope, Error: code, ErrorDescription: desc}
	h := w.Header()
	h.Set("WWW-Authenticate", c.String())
	h.Set("Cache-Control", "no-store")
	if code == "" {
		w.WriteHeader(status)
		return
	}
	h.Set("Content-Type", "application/json")
	body, _ := json.Marshal(oauth.ErrorResponse{Code: code, Description: desc})
	w.WriteHeader(status)
	w.Write(body)
}

// readBody reads the body within max bytes (reading at most max+1) and
// puts it back for the next handler. On failure it has answered (413 or
// 400).
func (m *Middleware) readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	if r.ContentLength > max {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	size := r.ContentLength
	if size < 0 || size > 64<<10 {
		size = min(512, max)
	}
	body, err := readAll(io.LimitReader(r.Body, max+1), int(size)+1)
	r.Body.Close()
	if err != nil {
		http.Error(w, "cannot read request body", http.StatusBadRequest)
		return nil, false
	}
	if int64(len(body)) > max {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// readAll is io.ReadAll starting with capacity n, so that a body of known
// length is read into one allocation.
func readAll(r io.Reader, n int) ([]byte, error) {
	b := make([]byte, 0, n)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		k, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

func isForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// validToken68 reports whether s is a b64token (RFC 6750 §2.1).
func validToken68(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' {
			continue
		}
		break
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

func missingScopes(granted, required []string) []string {
	var missing []string
	for _, s := range required {
		if s != "" && !slices.Contains(granted, s) && !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// stepUpScopes is the scope set of a 403 challenge under the strategy.
func (m *Middleware) stepUpScopes(granted, required []string) []string {
	switch m.opts.Strategy {
	case ScopeMinimum:
		return oauth.MergeScopes(nil, required)
	}
	var keep []string
	for _, s := range granted {
		if m.known[s] {
			keep = append(keep, s)
		}
	}
	out := oauth.MergeScopes(keep, required)
	if m.opts.Strategy == ScopeExtended {
		for _, s := range required {
			out = oauth.MergeScopes(out, m.opts.RelatedScopes[s])
		}
	}
	return out
}

func (m *Middleware) resourceScopes(uri string) []string {
	out := m.opts.ResourceScopes[uri]
	for _, p := range m.wildcardRS {
		if strings.HasPrefix(uri, p) {
			out = oauth.MergeScopes(out, m.opts.ResourceScopes[p+"*"])
		}
	}
	return out
}

// mergeScopes is oauth.MergeScopes without allocation when b adds nothing.
func mergeScopes(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	return oauth.MergeScopes(a, b)
}
