package authclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Token is an access token with what the client knows about it.
type Token struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	// Expiry is when the access token expires; zero means unknown.
	Expiry time.Time `json:"expiry,omitzero"`
	// Scope is the granted scope: the token response's, or the requested
	// one when the response named none.
	Scope []string `json:"scope,omitempty"`
}

// expired reports whether the token is past its expiry, with a margin.
func (t *Token) expired(now time.Time) bool {
	return !t.Expiry.IsZero() && now.Add(10*time.Second).After(t.Expiry)
}

// Key names one entry of a [Store]: a protected resource and the
// authorization server that serves it.
type Key struct {
	// Resource is the server's resource identifier.
	Resource string `json:"resource"`
	// Issuer is the authorization server's issuer identifier.
	Issuer string `json:"issuer"`
}

// Entry is what a [Store] keeps for one [Key]: the client registration at
// the issuer and the current token for the resource.
type Entry struct {
	Client *ClientRegistration `json:"client,omitempty"`
	Token  *Token              `json:"token,omitempty"`
}

// Store keeps entries between requests and, for [FileStore], between runs.
// Implementations must be safe for concurrent use. Load returns nil, nil for
// a key it does not hold.
type Store interface {
	Load(ctx context.Context, key Key) (*Entry, error)
	Save(ctx context.Context, key Key, e *Entry) error
	Delete(ctx context.Context, key Key) error
}

// MemoryStore is a [Store] in memory. The zero value is ready to use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[Key]Entry
}

// Load implements [Store].
func (s *MemoryStore) Load(_ context.Context, key Key) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok {
		return nil, nil
	}
	return e.clone(), nil
}

// Save implements [Store].
func (s *MemoryStore) Save(_ context.Context, key Key, e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[Key]Entry)
	}
	s.m[key] = *e.clone()
	return nil
}

// Delete implements [Store].
func (s *MemoryStore) Delete(_ context.Context, key Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}

func (e *Entry) clone() *Entry {
	c := &Entry{}
	if e.Client != nil {
		cl := *e.Client
		c.Client = &cl
	}
	if e.Token != nil {
		t := *e.Token
		t.Scope = append([]string(nil), e.Token.Scope...)
		c.Token = &t
	}
	return c
}

// FileStore is a [Store] in one JSON file, readable and writable by its
// owner only (mode 0600), holding one entry per resource and issuer. Signing
// keys are never written. Writes replace the file atomically.
type FileStore struct {
	// Path is the file's name. Its directory is created (0700) if needed.
	Path string

	mu sync.Mutex
}

type fileEntry struct {
	Key
	Entry
}

func (s *FileStore) read() ([]fileEntry, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("authclient: token file: %w", err)
	}
	var list []fileEntry
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("authclient: token file %s: %w", s.Path, err)
	}
	return list, nil
}

func (s *FileStore) write(list []fileEntry) error {
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("authclient: token file: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tokens-*")
	if err != nil {
		return fmt.Errorf("authclient: token file: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("authclient: token file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("authclient: token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("authclient: token file: %w", err)
	}
	if err := os.Rename(f.Name(), s.Path); err != nil {
		return fmt.Errorf("authclient: token file: %w", err)
	}
	return nil
}

// Load implements [Store].
func (s *FileStore) Load(_ context.Context, key Key) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list, err := s.read()
	if err != nil {
		return nil, err
	}
	for _, fe := range list {
		if fe.Key == key {
			return fe.Entry.clone(), nil
		}
	}
	return nil, nil
}

// Save implements [Store].
func (s *FileStore) Save(_ context.Context, key Key, e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	list, err := s.read()
	if err != nil {
		return err
	}
	ne := fileEntry{Key: key, Entry: *e.clone()}
	for i := range list {
		if list[i].Key == key {
			list[i] = ne
			return s.write(list)
		}
	}
	return s.write(append(list, ne))
}

// Delete implements [Store].
func (s *FileStore) Delete(_ context.Context, key Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	list, err := s.read()
	if err != nil {
		return err
	}
	out := list[:0]
	for _, fe := range list {
		if fe.Key != key {
			out = append(out, fe)
		}
	}
	return s.write(out)
}
