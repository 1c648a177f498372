package authserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// keyring holds the loaded signing keys, oldest first.
type keyring struct {
	mu        sync.RWMutex
	keys      []loadedKey
	refreshAt time.Time // next reread of the store
	missAt    time.Time // earliest reread for a key not in hand
}

type loadedKey struct {
	rec    SigningKey
	signer jose.Signer
	public jose.JSONWebKey
}

func loadKey(rec SigningKey) (loadedKey, error) {
	priv, err := x509.ParsePKCS8PrivateKey(rec.PKCS8)
	if err != nil {
		return loadedKey{}, fmt.Errorf("authserver: signing key %s: %w", rec.ID, err)
	}
	ec, ok := priv.(*ecdsa.PrivateKey)
	if !ok || rec.Algorithm != string(jose.ES256) {
		return loadedKey{}, fmt.Errorf("authserver: signing key %s: only ES256 keys are supported", rec.ID)
	}
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: ec, KeyID: rec.ID}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		return loadedKey{}, fmt.Errorf("authserver: signing key %s: %w", rec.ID, err)
	}
	return loadedKey{rec: rec, signer: signer, public: jose.JSONWebKey{
		Key: &ec.PublicKey, KeyID: rec.ID, Algorithm: string(jose.ES256), Use: "sig",
	}}, nil
}

func newSigningKey(now time.Time) (SigningKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return SigningKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return SigningKey{}, err
	}
	id, err := randomToken(12)
	if err != nil {
		return SigningKey{}, err
	}
	return SigningKey{ID: id, Algorithm: string(jose.ES256), PKCS8: der, CreatedAt: now.UTC()}, nil
}

// load reads the stored keys, creating the first one if there is none.
func (s *Server) loadKeys(ctx context.Context) error {
	recs, err := s.store.SigningKeys(ctx)
	if err != nil {
		return fmt.Errorf("authserver: loading signing keys: %w", err)
	}
	if len(recs) == 0 {
		return s.RotateKey(ctx)
	}
	s.keys.mu.RLock()
	known := make(map[string]loadedKey, len(s.keys.keys))
	for _, k := range s.keys.keys {
		known[k.rec.ID] = k
	}
	s.keys.mu.RUnlock()
	keys := make([]loadedKey, 0, len(recs))
	for _, r := range recs {
		if k, ok := known[r.ID]; ok {
			keys = append(keys, k)
			continue
		}
		k, err := loadKey(r)
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	s.keys.mu.Lock()
	s.keys.keys = keys
	s.keys.refreshAt = s.now().Add(keyRefresh)
	s.keys.mu.Unlock()
	return nil
}

// keyRefresh is how often a server rereads the stored signing keys, so
// that a key another server on the same store rotated in signs here within
// a minute. keyMissReload is how often, at most, it rereads them sooner:
// for a token whose key it does not hold (another server signed it with a
// key rotated in since), and for its JWKS endpoint (a resource server
// behind the same load balancer may fetch the JWKS from this server to
// verify a token another one signed). A flood of tokens with made-up key
// ids, or of JWKS requests, costs one store read per interval.
const (
	keyRefresh    = time.Minute
	keyMissReload = time.Second
)

// reloadKeysSoon rereads the stored signing keys unless it did so less
// than keyMissReload ago, and reports whether it reread them. Safe for
// concurrent use: of concurrent callers at most one reads the store.
func (s *Server) reloadKeysSoon(ctx context.Context) bool {
	now := s.now()
	s.keys.mu.Lock()
	due := !now.Before(s.keys.missAt)
	if due {
		s.keys.missAt = now.Add(keyMissReload)
	}
	s.keys.mu.Unlock()
	if !due {
		return false
	}
	if err := s.loadKeys(ctx); err != nil {
		s.log.Warn("signing keys not reloaded", "err", err)
		return false
	}
	return true
}

// refreshKeys rereads the stored signing and cookie keys when their
// refresh interval has passed. A failure keeps the keys in hand and is
// logged; a later request tries again.
func (s *Server) refreshKeys(ctx context.Context) {
	s.keys.mu.RLock()
	due := !s.now().Before(s.keys.refreshAt)
	s.keys.mu.RUnlock()
	if due {
		if err := s.loadKeys(ctx); err != nil {
			s.log.Warn("signing keys not reloaded", "err", err)
			s.keys.mu.Lock()
			s.keys.refreshAt = s.now().Add(keyRefresh)
			s.keys.mu.Unlock()
		}
	}
	s.refreshCookieKeys(ctx)
}

// RotateKey creates a new signing key, stores it and signs with it from now
// on; the other servers on the store follow within a minute. The previous
// keys stay in the JWKS for Config.KeyRetention, so tokens they signed keep
// verifying until they expire.
func (s *Server) RotateKey(ctx context.Context) error {
	rec, err := newSigningKey(s.now())
	if err != nil {
		return fmt.Errorf("authserver: creating a signing key: %w", err)
	}
	k, err := loadKey(rec)
	if err != nil {
		return err
	}
	if err := s.store.SaveSigningKey(ctx, rec); err != nil {
		return fmt.Errorf("authserver: storing a signing key: %w", err)
	}
	s.keys.mu.Lock()
	s.keys.keys = append(s.keys.keys, k)
	s.keys.mu.Unlock()
	return nil
}

// activeSigner returns the newest key's signer.
func (s *Server) activeSigner() (jose.Signer, error) {
	s.keys.mu.RLock()
	defer s.keys.mu.RUnlock()
	if len(s.keys.keys) == 0 {
		return nil, errors.New("authserver: no signing key")
	}
	return s.keys.keys[len(s.keys.keys)-1].signer, nil
}

// JWKS returns the public keys that verify the tokens the server issues: the
// active key and the retired ones still within Config.KeyRetention.
func (s *Server) JWKS() jose.JSONWebKeySet {
	s.keys.mu.RLock()
	defer s.keys.mu.RUnlock()
	now := s.now()
	var set jose.JSONWebKeySet
	for i, k := range s.keys.keys {
		if i+1 < len(s.keys.keys) && now.After(s.keys.keys[i+1].rec.CreatedAt.Add(s.cfg.KeyRetention)) {
			continue
		}
		set.Keys = append(set.Keys, k.public)
	}
	return set
}
