package authserver

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// Upstream tokens are kept in the store encrypted with AES-256-GCM. The
// sealed form is: version byte 1, key id length, key id, 12-byte nonce,
// ciphertext. The additional data is our subject, so that a record moved
// to another user's row does not decrypt.
const (
	sealedTokenVersion = 1
	tokenKeyStaticID   = "upstream-token-key"
	tokenKeyInfo       = "mcpstack upstream token encryption"
	// upstreamRefreshEarly refreshes a token this long before its expiry,
	// so that it does not expire on its way to the API.
	upstreamRefreshEarly = 30 * time.Second
)

// tokenKey returns the encryption key with the given id (empty: the key
// that encrypts now) and its id.
func (s *Server) tokenKey(ctx context.Context, id string) ([]byte, string, error) {
	if k := s.upstream.cfg.TokenKey; k != nil {
		if id != "" && id != tokenKeyStaticID {
			return nil, "", ErrNoUpstreamToken
		}
		return k, tokenKeyStaticID, nil
	}
	find := func() (CookieKey, bool) {
		s.cookies.mu.RLock()
		defer s.cookies.mu.RUnlock()
		if id == "" {
			return s.cookies.keys[len(s.cookies.keys)-1], true
		}
		for _, k := range s.cookies.keys {
			if k.ID == id {
				return k, true
			}
		}
		return CookieKey{}, false
	}
	ck, ok := find()
	if !ok && !s.cookies.static {
		// Another server may have rotated since this one loaded its keys.
		if err := s.reloadCookieKeys(ctx); err != nil {
			return nil, "", err
		}
		ck, ok = find()
	}
	if !ok {
		return nil, "", fmt.Errorf("%w: its encryption key is gone", ErrNoUpstreamToken)
	}
	// A key of its own, derived from the cookie key (HMAC as a PRF), so
	// that no cookie MAC is ever made with the encryption key.
	m := hmac.New(sha256.New, ck.Secret)
	m.Write([]byte(tokenKeyInfo))
	return m.Sum(nil), ck.ID, nil
}

func (s *Server) saveUpstreamTokens(ctx context.Context, subject string, t upstreamTokens) error {
	plain, err := json.Marshal(t)
	if err != nil {
		return err
	}
	key, id, err := s.tokenKey(ctx, "")
	if err != nil {
		return err
	}
	gcm, err := newGCM(key)
	if err != nil {
		return err
	}
	out := []byte{sealedTokenVersion, byte(len(id))}
	out = append(out, id...)
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	out = append(out, nonce...)
	out = gcm.Seal(out, nonce, plain, []byte(subject))
	sctx, cancel := s.storeContext(ctx)
	defer cancel()
	if err := s.store.SaveUpstreamGrant(sctx, UpstreamGrant{Subject: subject, Sealed: out, UpdatedAt: s.now()}); err != nil {
		return fmt.Errorf("authserver: storing upstream tokens: %w", err)
	}
	return nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// loadUpstreamTokens reads and decrypts a user's upstream tokens.
func (s *Server) loadUpstreamTokens(ctx context.Context, subject string) (upstreamTokens, error) {
	g, err := s.store.UpstreamGrant(ctx, subject)
	if errors.Is(err, ErrNotFound) {
		return upstreamTokens{}, ErrNoUpstreamToken
	}
	if err != nil {
		return upstreamTokens{}, fmt.Errorf("authserver: reading upstream tokens: %w", err)
	}
	b := g.Sealed
	if len(b) < 2 || b[0] != sealedTokenVersion || len(b) < 2+int(b[1]) {
		return upstreamTokens{}, fmt.Errorf("%w: unreadable record", ErrNoUpstreamToken)
	}
	id := string(b[2 : 2+int(b[1])])
	b = b[2+int(b[1]):]
	key, _, err := s.tokenKey(ctx, id)
	if err != nil {
		return upstreamTokens{}, err
	}
	gcm, err := newGCM(key)
	if err != nil {
		return upstreamTokens{}, err
	}
	if len(b) < gcm.NonceSize() {
		return upstreamTokens{}, fmt.Errorf("%w: unreadable record", ErrNoUpstreamToken)
	}
	plain, err := gcm.Open(nil, b[:gcm.NonceSize()], b[gcm.NonceSize():], []byte(subject))
	if err != nil {
		return upstreamTokens{}, fmt.Errorf("%w: record does not decrypt", ErrNoUpstreamToken)
	}
	var t upstreamTokens
	if err := json.Unmarshal(plain, &t); err != nil {
		return upstreamTokens{}, fmt.Errorf("%w: unreadable record", ErrNoUpstreamToken)
	}
	return t, nil
}

// UpstreamAccessToken returns the upstream provider's access token of our
// user subject (the sub of the tokens this server issued), refreshing it
// with its refresh token first when it expires within 30 seconds. It is
// the bridge to tool handlers: a resource server in the same process
// passes the server to auth.PrincipalUpstream, which calls this with the
// verified principal's subject, never with a token the MCP client sent.
// A resource server in another process obtains it with an RFC 8693 token
// exchange at the token endpoint (UpstreamConfig.ExchangeClients). The
// token never leaves the server otherwise.
//
// It returns an error matching ErrNoUpstreamToken when the user has none
// or it cannot be refreshed (the user must sign in again), and one
// matching ErrUpstream when the provider refused a refresh. Safe for
// concurrent use; concurrent refreshes of one user are made once per
// server. It blocks for the provider's answer, bounded by ctx and the
// upstream HTTP client's timeout. Without Config.Upstream it returns
// ErrNoUpstreamToken.
func (s *Server) UpstreamAccessToken(ctx context.Context, subject string) (string, error) {
	t, err := s.upstreamToken(ctx, subject)
	if err != nil {
		return "", err
	}
	return t.AccessToken, nil
}

// upstreamToken is UpstreamAccessToken with the whole record.
func (s *Server) upstreamToken(ctx context.Context, subject string) (upstreamTokens, error) {
	if s.upstream == nil {
		return upstreamTokens{}, ErrNoUpstreamToken
	}
	t, err := s.loadUpstreamTokens(ctx, subject)
	if err != nil {
		return upstreamTokens{}, err
	}
	if s.fresh(t) {
		return t, nil
	}
	h := fnv.New32a()
	h.Write([]byte(subject))
	mu := &s.upstream.refresh[h.Sum32()%uint32(len(s.upstream.refresh))]
	mu.Lock()
	defer mu.Unlock()
	// Another call may have refreshed while this one waited.
	if t, err = s.loadUpstreamTokens(ctx, subject); err != nil {
		return upstreamTokens{}, err
	}
	if s.fresh(t) {
		return t, nil
	}
	if t.RefreshToken == "" {
		return upstreamTokens{}, fmt.Errorf("%w: the access token expired and there is no refresh token", ErrNoUpstreamToken)
	}
	form := url.Values{"grant_type": {oauth.GrantRefreshToken}, "refresh_token": {t.RefreshToken}}
	resp, err := s.upstream.token(ctx, form)
	if err != nil {
		return upstreamTokens{}, fmt.Errorf("authserver: refreshing the upstream token: %w", err)
	}
	nt := upstreamTokensFrom(resp, s.now(), t.RefreshToken)
	if err := s.saveUpstreamTokens(ctx, subject, nt); err != nil {
		return upstreamTokens{}, err
	}
	return nt, nil
}

func (s *Server) fresh(t upstreamTokens) bool {
	return t.Expiry.IsZero() || s.now().Add(upstreamRefreshEarly).Before(t.Expiry)
}
