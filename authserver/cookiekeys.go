package authserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrStaticCookieKey reports a rotation asked of a server whose cookie key
// is Config.CookieKey, which the embedding program manages.
var ErrStaticCookieKey = errors.New("authserver: Config.CookieKey is set; rotate it there")

// Cookie key cadences. A server rereads the stored keys at most this
// often, so that a rotation made by another server on the same store is
// picked up for signing within cookieKeyRefresh, and a cookie signed with
// a key it has not seen yet makes it reread the store at most once per
// cookieKeyMissReload (a flood of forged cookies costs one store read per
// interval, not one per request).
const (
	cookieKeyRefresh    = time.Minute
	cookieKeyMissReload = time.Second
	cookieKeyBytes      = 32
)

// cookieKeyring holds the keys that sign and verify login sessions, CSRF
// tokens and the authorization request sealed in the forms. The newest
// key signs; older ones verify until Config.CookieKeyRetention after their
// successor was created. Safe for concurrent use.
type cookieKeyring struct {
	mu        sync.RWMutex
	keys      []CookieKey // oldest first
	static    bool        // Config.CookieKey: never reloaded nor rotated
	refreshAt time.Time   // next scheduled reload
	missAt    time.Time   // earliest reload after a verification miss
}

func newCookieKey(now time.Time) (CookieKey, error) {
	id, err := randomToken(12)
	if err != nil {
		return CookieKey{}, err
	}
	k := CookieKey{ID: id, Secret: make([]byte, cookieKeyBytes), CreatedAt: now.UTC()}
	if _, err := rand.Read(k.Secret); err != nil {
		return CookieKey{}, err
	}
	return k, nil
}

// loadCookieKeys reads the stored cookie keys, creating and storing the
// first one if there is none, unless Config.CookieKey is set.
func (s *Server) loadCookieKeys(ctx context.Context) error {
	if s.cfg.CookieKey != nil {
		s.cookies.keys = []CookieKey{{ID: "config", Secret: s.cfg.CookieKey}}
		s.cookies.static = true
		return nil
	}
	if err := s.reloadCookieKeys(ctx); err != nil {
		return err
	}
	s.cookies.mu.RLock()
	n := len(s.cookies.keys)
	s.cookies.mu.RUnlock()
	if n == 0 {
		return s.RotateCookieKey(ctx)
	}
	return nil
}

// reloadCookieKeys replaces the keys with the stored ones.
func (s *Server) reloadCookieKeys(ctx context.Context) error {
	keys, err := s.store.CookieKeys(ctx)
	if err != nil {
		return fmt.Errorf("authserver: loading cookie keys: %w", err)
	}
	s.cookies.mu.Lock()
	defer s.cookies.mu.Unlock()
	if len(keys) > 0 {
		s.cookies.keys = keys
	}
	s.cookies.refreshAt = s.now().Add(cookieKeyRefresh)
	return nil
}

// RotateCookieKey creates a new cookie key, stores it and signs sessions,
// CSRF tokens and forms with it from now on, on this server at once and on
// the others sharing the store within a minute. Cookies signed with the
// previous keys keep verifying for Config.CookieKeyRetention. It returns
// ErrStaticCookieKey if Config.CookieKey is set. Safe to call while the
// server serves requests.
func (s *Server) RotateCookieKey(ctx context.Context) error {
	if s.cookies.static {
		return ErrStaticCookieKey
	}
	k, err := newCookieKey(s.now())
	if err != nil {
		return fmt.Errorf("authserver: creating a cookie key: %w", err)
	}
	if err := s.store.SaveCookieKey(ctx, k); err != nil {
		return fmt.Errorf("authserver: storing a cookie key: %w", err)
	}
	s.cookies.mu.Lock()
	s.cookies.keys = append(s.cookies.keys, k)
	s.cookies.mu.Unlock()
	return nil
}

// refreshCookieKeys rereads the stored keys when the refresh interval has
// passed. A failure keeps the keys in hand and is logged; the next request
// after the interval tries again.
func (s *Server) refreshCookieKeys(ctx context.Context) {
	if s.cookies.static {
		return
	}
	s.cookies.mu.RLock()
	due := !s.now().Before(s.cookies.refreshAt)
	s.cookies.mu.RUnlock()
	if !due {
		return
	}
	if err := s.reloadCookieKeys(ctx); err != nil {
		s.log.Warn("cookie keys not reloaded", "err", err)
	}
}

// mac signs parts (each followed by a zero byte, so that no two lists
// collide) with the newest cookie key.
func (s *Server) mac(parts ...string) []byte {
	s.cookies.mu.RLock()
	key := s.cookies.keys[len(s.cookies.keys)-1].Secret
	s.cookies.mu.RUnlock()
	return macWith(key, parts)
}

func macWith(key []byte, parts []string) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// verifyMAC reports whether got is the MAC of parts under a key still
// accepted. If none matches, the stored keys are reread (at most once per
// cookieKeyMissReload) in case another server rotated, and tried again.
func (s *Server) verifyMAC(ctx context.Context, got []byte, parts ...string) bool {
	if s.macMatches(got, parts) {
		return true
	}
	if s.cookies.static {
		return false
	}
	now := s.now()
	s.cookies.mu.Lock()
	due := !now.Before(s.cookies.missAt)
	if due {
		s.cookies.missAt = now.Add(cookieKeyMissReload)
	}
	s.cookies.mu.Unlock()
	if !due {
		return false
	}
	if err := s.reloadCookieKeys(ctx); err != nil {
		s.log.Warn("cookie keys not reloaded", "err", err)
		return false
	}
	return s.macMatches(got, parts)
}

// macMatches tries every accepted key: the newest, and each older one
// until Config.CookieKeyRetention after its successor was created.
func (s *Server) macMatches(got []byte, parts []string) bool {
	now := s.now()
	s.cookies.mu.RLock()
	defer s.cookies.mu.RUnlock()
	keys := s.cookies.keys
	for i := len(keys) - 1; i >= 0; i-- {
		if i+1 < len(keys) && !now.Before(keys[i+1].CreatedAt.Add(s.cfg.CookieKeyRetention)) {
			break
		}
		if hmac.Equal(got, macWith(keys[i].Secret, parts)) {
			return true
		}
	}
	return false
}
