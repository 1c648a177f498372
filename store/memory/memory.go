// Package memory is an in-memory [authserver.Store]: fast, and gone when the
// process exits. Use it in tests and for throwaway development servers; use
// store/sqlite for anything that must survive a restart.
package memory

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
)

// Store is an in-memory authserver.Store. The zero value is not usable; call
// [New].
type Store struct {
	now func() time.Time

	mu       sync.Mutex
	clients  map[string]authserver.Client
	codes    map[string]entry[authserver.Code]
	refresh  map[string]entry[authserver.RefreshToken]
	families map[string]time.Time
	nonces   map[string]time.Time
	keys     []authserver.SigningKey
	cookies  []authserver.CookieKey
	approved map[[2]string]time.Time
	states   map[string]authserver.UpstreamState
	grants   map[string]authserver.UpstreamGrant
	writes   int
}

type entry[T any] struct {
	v       T
	used    bool
	expires time.Time
}

// New returns an empty store.
func New() *Store {
	return &Store{
		now:      time.Now,
		clients:  make(map[string]authserver.Client),
		codes:    make(map[string]entry[authserver.Code]),
		refresh:  make(map[string]entry[authserver.RefreshToken]),
		families: make(map[string]time.Time),
		nonces:   make(map[string]time.Time),
		approved: make(map[[2]string]time.Time),
		states:   make(map[string]authserver.UpstreamState),
		grants:   make(map[string]authserver.UpstreamGrant),
	}
}

var _ authserver.Store = (*Store)(nil)

// prune drops expired records every 256 writes; the caller holds mu.
func (s *Store) prune() {
	s.writes++
	if s.writes%256 != 0 {
		return
	}
	now := s.now()
	for k, e := range s.codes {
		if now.After(e.expires) {
			delete(s.codes, k)
		}
	}
	for k, e := range s.refresh {
		if now.After(e.expires) {
			delete(s.refresh, k)
		}
	}
	for k, st := range s.states {
		if now.After(st.ExpiresAt) {
			delete(s.states, k)
		}
	}
	for _, m := range []map[string]time.Time{s.families, s.nonces} {
		for k, t := range m {
			if now.After(t) {
				delete(m, k)
			}
		}
	}
}

func cloneClient(c authserver.Client) authserver.Client {
	c.SecretHash = slices.Clone(c.SecretHash)
	c.Metadata.RedirectURIs = slices.Clone(c.Metadata.RedirectURIs)
	c.Metadata.GrantTypes = slices.Clone(c.Metadata.GrantTypes)
	c.Metadata.ResponseTypes = slices.Clone(c.Metadata.ResponseTypes)
	c.Metadata.Contacts = slices.Clone(c.Metadata.Contacts)
	c.Metadata.JWKS = slices.Clone(c.Metadata.JWKS)
	return c
}

// The clone functions copy what a caller could change through a shared
// slice, so that nothing handed in or out aliases what the store keeps.

func cloneCode(c authserver.Code) authserver.Code {
	c.Scopes = slices.Clone(c.Scopes)
	return c
}

func cloneRefresh(t authserver.RefreshToken) authserver.RefreshToken {
	t.Scopes = slices.Clone(t.Scopes)
	return t
}

func cloneSigningKey(k authserver.SigningKey) authserver.SigningKey {
	k.PKCS8 = slices.Clone(k.PKCS8)
	return k
}

func cloneCookieKey(k authserver.CookieKey) authserver.CookieKey {
	k.Secret = slices.Clone(k.Secret)
	return k
}

// cloneEach returns a new slice of clones of the elements of in.
func cloneEach[T any](in []T, clone func(T) T) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = clone(v)
	}
	return out
}

// peek returns a clone of the single-use record hash of m: ErrNotFound
// when there is none, ErrAlreadyUsed (with the record) when it was spent.
// The caller holds mu.
func peek[T any](m map[string]entry[T], hash string, clone func(T) T) (T, error) {
	e, ok := m[hash]
	if !ok {
		var zero T
		return zero, authserver.ErrNotFound
	}
	if e.used {
		return clone(e.v), authserver.ErrAlreadyUsed
	}
	return clone(e.v), nil
}

// spend is peek that also marks the record spent, after then (unless nil)
// has succeeded: a code redeemed or a token rotated is spent only if its
// successor was stored, both under the one hold of mu the caller has. The
// record is written back after then, which may prune it from m.
func spend[T any](m map[string]entry[T], hash string, clone func(T) T, then func() error) (T, error) {
	v, err := peek(m, hash, clone)
	if err != nil {
		return v, err
	}
	e := m[hash]
	if then != nil {
		if err := then(); err != nil {
			return v, err
		}
	}
	e.used = true
	m[hash] = e
	return v, nil
}

// CreateClient implements authserver.Store.
func (s *Store) CreateClient(_ context.Context, c authserver.Client) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.clients[c.ID()]; ok {
		return authserver.ErrExists
	}
	s.clients[c.ID()] = cloneClient(c)
	return nil
}

// Client implements authserver.Store.
func (s *Store) Client(_ context.Context, id string) (authserver.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return authserver.Client{}, authserver.ErrNotFound
	}
	return cloneClient(c), nil
}

// MarkClientUsed implements authserver.Store.
func (s *Store) MarkClientUsed(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return authserver.ErrNotFound
	}
	c.UnusedExpiresAt = time.Time{}
	s.clients[id] = c
	return nil
}

// PruneClients implements authserver.Store.
func (s *Store) PruneClients(_ context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, c := range s.clients {
		if !c.UnusedExpiresAt.IsZero() && !c.UnusedExpiresAt.After(now) {
			delete(s.clients, id)
			n++
		}
	}
	return n, nil
}

// SaveCode implements authserver.Store.
func (s *Store) SaveCode(_ context.Context, c authserver.Code) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune()
	if _, ok := s.codes[c.Hash]; ok {
		return authserver.ErrExists
	}
	s.codes[c.Hash] = entry[authserver.Code]{v: cloneCode(c), expires: c.ExpiresAt}
	return nil
}

// TakeCode implements authserver.Store.
func (s *Store) TakeCode(_ context.Context, hash string) (authserver.Code, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return spend(s.codes, hash, cloneCode, nil)
}

// Code implements authserver.Store.
func (s *Store) Code(_ context.Context, hash string) (authserver.Code, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return peek(s.codes, hash, cloneCode)
}

// RedeemCode implements authserver.Store: the code and the refresh token
// change under one hold of the lock.
func (s *Store) RedeemCode(_ context.Context, hash string, first *authserver.RefreshToken) (authserver.Code, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var then func() error
	if first != nil {
		then = func() error { return s.addRefresh(*first) }
	}
	return spend(s.codes, hash, cloneCode, then)
}

// addRefresh stores a new refresh token; the caller holds mu.
func (s *Store) addRefresh(t authserver.RefreshToken) error {
	s.prune()
	if _, ok := s.refresh[t.Hash]; ok {
		return authserver.ErrExists
	}
	s.refresh[t.Hash] = entry[authserver.RefreshToken]{v: cloneRefresh(t), expires: t.ExpiresAt}
	return nil
}

// RotateRefreshToken implements authserver.Store: both tokens change under
// one hold of the lock.
func (s *Store) RotateRefreshToken(_ context.Context, hash string, next authserver.RefreshToken) (authserver.RefreshToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return spend(s.refresh, hash, cloneRefresh, func() error { return s.addRefresh(next) })
}

// SaveRefreshToken implements authserver.Store.
func (s *Store) SaveRefreshToken(_ context.Context, t authserver.RefreshToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addRefresh(t)
}

// UseRefreshToken implements authserver.Store.
func (s *Store) UseRefreshToken(_ context.Context, hash string) (authserver.RefreshToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return spend(s.refresh, hash, cloneRefresh, nil)
}

// RefreshToken implements authserver.Store.
func (s *Store) RefreshToken(_ context.Context, hash string) (authserver.RefreshToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return peek(s.refresh, hash, cloneRefresh)
}

// RevokeFamily implements authserver.Store.
func (s *Store) RevokeFamily(_ context.Context, familyID string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune()
	if old, ok := s.families[familyID]; !ok || until.After(old) {
		s.families[familyID] = until
	}
	return nil
}

// FamilyRevoked implements authserver.Store.
func (s *Store) FamilyRevoked(_ context.Context, familyID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.families[familyID]
	return ok, nil
}

// UseNonce implements authserver.Store.
func (s *Store) UseNonce(_ context.Context, key string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune()
	if t, ok := s.nonces[key]; ok && !s.now().After(t) {
		return authserver.ErrAlreadyUsed
	}
	s.nonces[key] = until
	return nil
}

// SaveSigningKey implements authserver.Store.
func (s *Store) SaveSigningKey(_ context.Context, k authserver.SigningKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.keys, func(old authserver.SigningKey) bool { return old.ID == k.ID }) {
		return authserver.ErrExists
	}
	s.keys = append(s.keys, cloneSigningKey(k))
	return nil
}

// SigningKeys implements authserver.Store.
func (s *Store) SigningKeys(_ context.Context) ([]authserver.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneEach(s.keys, cloneSigningKey), nil
}

// SaveCookieKey implements authserver.Store.
func (s *Store) SaveCookieKey(_ context.Context, k authserver.CookieKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.cookies, func(old authserver.CookieKey) bool { return old.ID == k.ID }) {
		return authserver.ErrExists
	}
	s.cookies = append(s.cookies, cloneCookieKey(k))
	slices.SortStableFunc(s.cookies, func(a, b authserver.CookieKey) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return nil
}

// CookieKeys implements authserver.Store.
func (s *Store) CookieKeys(_ context.Context) ([]authserver.CookieKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneEach(s.cookies, cloneCookieKey), nil
}

// ApproveClient implements authserver.Store.
func (s *Store) ApproveClient(_ context.Context, subject, clientID string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approved[[2]string{subject, clientID}] = at
	return nil
}

// ClientApproved implements authserver.Store.
func (s *Store) ClientApproved(_ context.Context, subject, clientID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.approved[[2]string{subject, clientID}]
	return ok, nil
}

// SaveUpstreamState implements authserver.Store.
func (s *Store) SaveUpstreamState(_ context.Context, st authserver.UpstreamState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.states[st.Hash]; ok {
		return authserver.ErrExists
	}
	st.Data = slices.Clone(st.Data)
	s.states[st.Hash] = st
	s.prune()
	return nil
}

// TakeUpstreamState implements authserver.Store.
func (s *Store) TakeUpstreamState(_ context.Context, hash string) (authserver.UpstreamState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[hash]
	if !ok {
		return authserver.UpstreamState{}, authserver.ErrNotFound
	}
	delete(s.states, hash)
	return st, nil
}

// SaveUpstreamGrant implements authserver.Store.
func (s *Store) SaveUpstreamGrant(_ context.Context, g authserver.UpstreamGrant) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g.Sealed = slices.Clone(g.Sealed)
	s.grants[g.Subject] = g
	return nil
}

// UpstreamGrant implements authserver.Store.
func (s *Store) UpstreamGrant(_ context.Context, subject string) (authserver.UpstreamGrant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.grants[subject]
	if !ok {
		return authserver.UpstreamGrant{}, authserver.ErrNotFound
	}
	g.Sealed = slices.Clone(g.Sealed)
	return g, nil
}
