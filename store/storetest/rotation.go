package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
)

// errInjected is the failure a faultStore injects.
var errInjected = errors.New("storetest: injected failure")

// faultStore wraps a store to play a slow, unreliable database: every call
// may wait (giving up when its context ends, as a database driver does),
// the call numbered failAt fails without reaching the store, and the
// refresh tokens written are recorded per family so that the test can find
// every token a grant may hold.
type faultStore struct {
	authserver.Store
	maxDelay time.Duration

	mu      sync.Mutex
	calls   int
	failAt  int // 1-based; 0 means never
	written map[string][]string
}

func newFaultStore(s authserver.Store, maxDelay time.Duration) *faultStore {
	return &faultStore{Store: s, maxDelay: maxDelay, written: make(map[string][]string)}
}

// enter counts a call, injects the failure if it is the one armed, and
// waits a random time or until ctx ends.
func (f *faultStore) enter(ctx context.Context) error {
	f.mu.Lock()
	f.calls++
	fail := f.calls == f.failAt
	f.mu.Unlock()
	if fail {
		return errInjected
	}
	if f.maxDelay > 0 {
		t := time.NewTimer(rand.N(f.maxDelay))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// arm makes the n-th call from now fail (0: none) and returns the count of
// calls so far.
func (f *faultStore) arm(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = 0
	f.failAt = n
	return c
}

func (f *faultStore) record(t authserver.RefreshToken) {
	f.mu.Lock()
	f.written[t.FamilyID] = append(f.written[t.FamilyID], t.Hash)
	f.mu.Unlock()
}

func (f *faultStore) candidates(family string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.written[family]...)
}

func (f *faultStore) Client(ctx context.Context, id string) (authserver.Client, error) {
	if err := f.enter(ctx); err != nil {
		return authserver.Client{}, err
	}
	return f.Store.Client(ctx, id)
}

func (f *faultStore) SaveRefreshToken(ctx context.Context, t authserver.RefreshToken) error {
	f.record(t)
	if err := f.enter(ctx); err != nil {
		return err
	}
	return f.Store.SaveRefreshToken(ctx, t)
}

func (f *faultStore) UseRefreshToken(ctx context.Context, hash string) (authserver.RefreshToken, error) {
	if err := f.enter(ctx); err != nil {
		return authserver.RefreshToken{}, err
	}
	return f.Store.UseRefreshToken(ctx, hash)
}

func (f *faultStore) RefreshToken(ctx context.Context, hash string) (authserver.RefreshToken, error) {
	if err := f.enter(ctx); err != nil {
		return authserver.RefreshToken{}, err
	}
	return f.Store.RefreshToken(ctx, hash)
}

func (f *faultStore) RotateRefreshToken(ctx context.Context, hash string, next authserver.RefreshToken) (authserver.RefreshToken, error) {
	f.record(next)
	if err := f.enter(ctx); err != nil {
		return authserver.RefreshToken{}, err
	}
	return f.Store.RotateRefreshToken(ctx, hash, next)
}

func (f *faultStore) Code(ctx context.Context, hash string) (authserver.Code, error) {
	if err := f.enter(ctx); err != nil {
		return authserver.Code{}, err
	}
	return f.Store.Code(ctx, hash)
}

func (f *faultStore) RedeemCode(ctx context.Context, hash string, first *authserver.RefreshToken) (authserver.Code, error) {
	if first != nil {
		f.record(*first)
	}
	if err := f.enter(ctx); err != nil {
		return authserver.Code{}, err
	}
	return f.Store.RedeemCode(ctx, hash, first)
}

func (f *faultStore) FamilyRevoked(ctx context.Context, family string) (bool, error) {
	if err := f.enter(ctx); err != nil {
		return false, err
	}
	return f.Store.FamilyRevoked(ctx, family)
}

func (f *faultStore) RevokeFamily(ctx context.Context, family string, until time.Time) error {
	if err := f.enter(ctx); err != nil {
		return err
	}
	return f.Store.RevokeFamily(ctx, family, until)
}

// grant is one seeded grant of the rotation tests: its family and the raw
// refresh token its client holds.
type grant struct {
	family, token string
}

// rotationRig is an authorization server on a faultStore, with a public
// client "app" and grants seeded directly in the store.
type rotationRig struct {
	t     *testing.T
	fs    *faultStore
	inner authserver.Store
	ts    *httptest.Server
}

const rotationResource = "https://rs.test/mcp"

func newRotationRig(t *testing.T, st authserver.Store, maxDelay time.Duration) *rotationRig {
	t.Helper()
	fs := newFaultStore(st, maxDelay)
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	s, err := authserver.NewServer(context.Background(), authserver.Config{Issuer: ts.URL, Store: fs, DevUser: "alice",
		TrustedClient: func(authserver.Client) bool { return true },
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h = s
	if err := st.CreateClient(t.Context(), authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app",
		RedirectURIs: []string{"http://127.0.0.1:9/cb"}, TokenEndpointAuthMethod: "none",
		GrantTypes: []string{"authorization_code", "refresh_token"}}}); err != nil {
		t.Fatal(err)
	}
	return &rotationRig{t: t, fs: fs, inner: st, ts: ts}
}

// hash is the key the server stores a token under (the SHA-256, hex).
func hash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// seed stores n grants, each one refresh token, straight into the store.
func (r *rotationRig) seed(n int) []grant {
	r.t.Helper()
	gs := make([]grant, n)
	for i := range gs {
		gs[i] = grant{family: fmt.Sprintf("fam%03d-%d", i, rand.Uint64()), token: fmt.Sprintf("tok%03d-%d", i, rand.Uint64())}
		rt := authserver.RefreshToken{Hash: hash(gs[i].token), FamilyID: gs[i].family, ClientID: "app", Subject: "alice",
			Resource: rotationResource, Scopes: []string{"a", "b"}, ExpiresAt: time.Now().Add(time.Hour)}
		if err := r.inner.SaveRefreshToken(r.t.Context(), rt); err != nil {
			r.t.Fatal(err)
		}
		r.fs.record(rt)
	}
	return gs
}

// newCode runs an authorization request (the user is signed in and the
// client trusted) and returns the code and its PKCE verifier.
func (r *rotationRig) newCode() (code, verifier string) {
	r.t.Helper()
	verifier, _ = oauth.NewVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {"app"}, "redirect_uri": {"http://127.0.0.1:9/cb"},
		"code_challenge": {oauth.S256Challenge(verifier)}, "code_challenge_method": {"S256"}, "resource": {rotationResource}}
	hc := r.ts.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Get(r.ts.URL + "/authorize?" + q.Encode())
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		r.t.Fatalf("authorize: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query().Get("code"), verifier
}

// exchange posts an authorization_code grant and returns the status and
// the refresh token.
func (r *rotationRig) exchange(ctx context.Context, code, verifier string) (int, string, error) {
	return r.token(ctx, url.Values{"grant_type": {"authorization_code"}, "client_id": {"app"}, "code": {code},
		"redirect_uri": {"http://127.0.0.1:9/cb"}, "code_verifier": {verifier}})
}

// refresh posts a refresh_token grant with ctx and returns the status and
// the new refresh token (empty on any failure, including a cancelled ctx).
func (r *rotationRig) refresh(ctx context.Context, tok string, extra url.Values) (int, string, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {"app"}, "refresh_token": {tok}}
	for k, v := range extra {
		form[k] = v
	}
	return r.token(ctx, form)
}

// token posts a token request.
func (r *rotationRig) token(ctx context.Context, form url.Values) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.ts.URL+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := r.ts.Client().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err
	}
	var tr oauth.TokenResponse
	if resp.StatusCode == http.StatusOK {
		if err := tr.UnmarshalJSON(b); err != nil {
			return resp.StatusCode, "", err
		}
	}
	return resp.StatusCode, tr.RefreshToken, nil
}

// usable counts the refresh tokens of a grant that a client could still
// redeem: stored, unused, unexpired, in a family not revoked.
func (r *rotationRig) usable(g grant) int {
	r.t.Helper()
	ctx := context.Background()
	if revoked, err := r.inner.FamilyRevoked(ctx, g.family); err != nil || revoked {
		return 0
	}
	n := 0
	for _, h := range r.fs.candidates(g.family) {
		if rt, err := r.inner.RefreshToken(ctx, h); err == nil && time.Now().Before(rt.ExpiresAt) {
			n++
		}
	}
	return n
}

// RefreshStorm refreshes n grants at once, each by a client that gives up
// after a random 50-300 ms, through a store whose every call takes up to
// maxDelay, and returns how many grants were lost: those left without
// exactly one usable refresh token once every request has finished.
func RefreshStorm(t *testing.T, st authserver.Store, n int, maxDelay time.Duration) (lost int) {
	r := newRotationRig(t, st, maxDelay)
	gs := r.seed(n)
	var wg sync.WaitGroup
	var gaveUp atomic.Int32
	for _, g := range gs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond+rand.N(250*time.Millisecond))
			defer cancel()
			if _, _, err := r.refresh(ctx, g.token, nil); err != nil {
				gaveUp.Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("%d of %d clients gave up before their answer", gaveUp.Load(), n)
	// Close waits for the handlers still running: the server's own work
	// goes on after its clients have left.
	r.ts.Close()
	for _, g := range gs {
		if u := r.usable(g); u != 1 {
			lost++
			t.Logf("grant %s: %d usable refresh tokens", g.family, u)
		}
	}
	return lost
}

// runRotation checks rotation under cancellation and failures.
func runRotation(t *testing.T, newStore func(t *testing.T) authserver.Store) {
	t.Run("refresh storm with clients giving up", func(t *testing.T) {
		const n = 100
		lost := RefreshStorm(t, newStore(t), n, 120*time.Millisecond)
		t.Logf("grants lost out of %d concurrent refreshes whose clients give up after 50-300 ms: %d", n, lost)
		if lost != 0 {
			t.Fatalf("%d of %d grants lost", lost, n)
		}
	})
	t.Run("failure injected at each store call of a refresh", func(t *testing.T) {
		r := newRotationRig(t, newStore(t), 0)
		g := r.seed(1)[0]
		tok := g.token
		for i := 1; ; i++ {
			r.fs.arm(i)
			status, next, err := r.refresh(t.Context(), tok, nil)
			calls := r.fs.arm(0)
			if err != nil {
				t.Fatal(err)
			}
			if u := r.usable(g); u != 1 {
				t.Fatalf("failure at call %d (status %d): the grant has %d usable refresh tokens, want 1", i, status, u)
			}
			if i > calls {
				// No call failed: the refresh went through.
				if status != http.StatusOK || next == "" {
					t.Fatalf("refresh without failure: %d", status)
				}
				tok = next
				break
			}
			if status == http.StatusOK {
				t.Fatalf("failure at call %d: refresh answered 200", i)
			}
		}
		// The token the client holds after all those failures works.
		if status, _, err := r.refresh(t.Context(), tok, nil); err != nil || status != http.StatusOK {
			t.Fatalf("refresh after the failures: %d %v", status, err)
		}
	})
	t.Run("failure injected at each store call of a code exchange", func(t *testing.T) {
		r := newRotationRig(t, newStore(t), 0)
		code, verifier := r.newCode()
		for i := 1; ; i++ {
			r.fs.arm(i)
			status, rt, err := r.exchange(t.Context(), code, verifier)
			calls := r.fs.arm(0)
			if err != nil {
				t.Fatal(err)
			}
			if i > calls {
				if status != http.StatusOK || rt == "" {
					t.Fatalf("exchange without failure: %d", status)
				}
				break
			}
			if status == http.StatusOK {
				t.Fatalf("failure at call %d: exchange answered 200", i)
			}
			// The code was not spent: nothing was issued from it.
			if c, err := r.inner.Code(t.Context(), hash(code)); err != nil {
				t.Fatalf("failure at call %d (status %d): the code is gone: %+v %v", i, status, c, err)
			}
		}
	})
	t.Run("reuse revokes the family", func(t *testing.T) {
		r := newRotationRig(t, newStore(t), 0)
		g := r.seed(1)[0]
		status, next, err := r.refresh(t.Context(), g.token, nil)
		if err != nil || status != http.StatusOK || next == "" {
			t.Fatalf("refresh: %d %v", status, err)
		}
		if status, _, _ := r.refresh(t.Context(), g.token, nil); status != http.StatusBadRequest {
			t.Fatalf("old token again: %d, want 400", status)
		}
		if status, _, _ := r.refresh(t.Context(), next, nil); status != http.StatusBadRequest {
			t.Fatalf("new token after reuse: %d, want 400 (family revoked)", status)
		}
		if u := r.usable(g); u != 0 {
			t.Fatalf("%d usable tokens after reuse, want 0", u)
		}
	})
}
