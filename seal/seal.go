// Package seal turns server state into opaque strings that only holders of
// the server's keys can read or forge, so that a peer can carry the state
// between requests and any replica holding the keys can take it back.
//
// MCP revision 2026-07-28 has the server hand such state to the client:
// the requestState of a multi round-trip request (basic/patterns/mrtr),
// which the client echoes in its retry and which "servers MUST treat as
// attacker-controlled input" whose integrity they protect with "HMAC or
// AEAD", with a short expiry inside the protected payload. A Ring does
// that with XChaCha20-Poly1305 (RFC 8439's AEAD with a 192-bit nonce,
// draft-irtf-cfrg-xchacha): the nonce is random, so one key seals any
// number of values with no coordination between replicas.
//
// A sealed value is, base64url-encoded without padding:
//
//	version (1 byte, 1) | key id (4 bytes) | nonce (24 bytes) | ciphertext and tag
//
// The plaintext is the expiry (Unix seconds, 8 bytes, big-endian) followed
// by the caller's payload. The version, the key id and the caller's
// associated data (a purpose and whatever the value is bound to, such as
// the request it belongs to) are authenticated, not encrypted. The key id
// is derived from the key, so a ring's keys need no names: rotation is
// putting a new secret first (it seals from then on) and keeping the old
// ones after it (they still open) until what they sealed has expired.
package seal

import (
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// Errors Open returns, matched with errors.Is. ErrInvalid covers every way
// a value can fail authentication (malformed, tampered, sealed by a key the
// ring does not hold, bound to other associated data) without saying
// which, so that a forger learns nothing from the answer.
var (
	ErrInvalid  = errors.New("seal: invalid or tampered value")
	ErrExpired  = errors.New("seal: value has expired")
	ErrTooLarge = errors.New("seal: value is too large")
	ErrNoKeys   = errors.New("seal: the ring has no keys")
	ErrShortKey = errors.New("seal: a secret must be at least 32 bytes")
)

// MinSecretSize is the shortest secret NewRing accepts: 256 bits.
const MinSecretSize = 32

// DefaultMaxSize is the Options.MaxSize of a ring that sets none: the
// longest sealed value, in bytes of its text, that Seal produces and Open
// reads. 64 KiB holds the answers of a few rounds of elicitation and
// sampling; Open refuses longer input before decoding it, so a peer cannot
// make the server decode or decrypt megabytes.
const DefaultMaxSize = 64 << 10

const (
	version    = 1
	keyIDSize  = 4
	headerSize = 1 + keyIDSize
	nonceSize  = chacha20poly1305.NonceSizeX
	expirySize = 8
	overhead   = headerSize + nonceSize + expirySize + chacha20poly1305.Overhead
)

// Options configure a Ring. The zero value is usable.
type Options struct {
	// MaxSize bounds the text of a sealed value, in bytes: Seal refuses to
	// produce a longer one and Open to read one, both with ErrTooLarge.
	// Zero means DefaultMaxSize.
	MaxSize int
	// Now returns the current time, for expiry; nil means time.Now.
	Now func() time.Time
}

// Ring is a set of keys: it seals with the first and opens with any. A
// Ring is immutable and safe for concurrent use; to rotate, build a new
// one and swap it in.
type Ring struct {
	keys    []ringKey // the sealing key first
	maxSize int
	now     func() time.Time
}

type ringKey struct {
	id   [keyIDSize]byte
	aead cipher.AEAD
}

// NewRing returns a ring of secrets, each at least MinSecretSize bytes of
// high-entropy data (GenerateSecret makes one): the first seals, every one
// opens. Secrets that are equal, or whose derived key ids collide, are
// refused, as is an empty list. The ring keeps keys derived from the
// secrets, not the secrets.
func NewRing(secrets [][]byte, opts *Options) (*Ring, error) {
	if len(secrets) == 0 {
		return nil, ErrNoKeys
	}
	r := &Ring{maxSize: DefaultMaxSize, now: time.Now}
	if opts != nil {
		if opts.MaxSize > 0 {
			r.maxSize = opts.MaxSize
		}
		if opts.Now != nil {
			r.now = opts.Now
		}
	}
	if min := base64.RawURLEncoding.EncodedLen(overhead); r.maxSize < min {
		return nil, fmt.Errorf("seal: MaxSize %d is below the %d bytes of an empty sealed value", r.maxSize, min)
	}
	for i, s := range secrets {
		k, err := deriveKey(s)
		if err != nil {
			return nil, fmt.Errorf("seal: secret %d: %w", i, err)
		}
		for _, o := range r.keys {
			if o.id == k.id {
				return nil, fmt.Errorf("seal: secret %d repeats another (same key id)", i)
			}
		}
		r.keys = append(r.keys, k)
	}
	return r, nil
}

// deriveKey derives the AEAD key and key id of a secret with HKDF-SHA256
// (RFC 5869), so that secrets of any length and the id are independent.
func deriveKey(secret []byte) (ringKey, error) {
	if len(secret) < MinSecretSize {
		return ringKey{}, ErrShortKey
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "mcpstack seal v1 key", chacha20poly1305.KeySize)
	if err != nil {
		return ringKey{}, err
	}
	id, err := hkdf.Key(sha256.New, secret, nil, "mcpstack seal v1 key id", keyIDSize)
	if err != nil {
		return ringKey{}, err
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return ringKey{}, err
	}
	var k ringKey
	copy(k.id[:], id)
	k.aead = aead
	return k, nil
}

// GenerateSecret returns a new random secret of MinSecretSize bytes.
func GenerateSecret() []byte {
	b := make([]byte, MinSecretSize)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24 and later)
	return b
}

// MaxSize returns the longest sealed value the ring produces and reads.
func (r *Ring) MaxSize() int { return r.maxSize }

// MaxPayload returns the longest payload Seal accepts.
func (r *Ring) MaxPayload() int {
	return base64.RawURLEncoding.DecodedLen(r.maxSize) - overhead
}

// Seal encrypts and authenticates payload with the ring's first key, with
// the expiry now+ttl inside, binding it to ad (authenticated, not stored:
// Open must be given the same ad). A payload whose sealed text would be
// longer than the ring's MaxSize gets ErrTooLarge. ttl must be positive.
func (r *Ring) Seal(payload []byte, ttl time.Duration, ad []byte) (string, error) {
	if ttl <= 0 {
		return "", errors.New("seal: ttl must be positive")
	}
	if len(payload) > r.MaxPayload() {
		return "", fmt.Errorf("%w: %d bytes of payload; at most %d fit in %d bytes", ErrTooLarge, len(payload), r.MaxPayload(), r.maxSize)
	}
	k := &r.keys[0]
	buf := make([]byte, headerSize+nonceSize, overhead+len(payload))
	buf[0] = version
	copy(buf[1:], k.id[:])
	nonce := buf[headerSize : headerSize+nonceSize]
	_, _ = rand.Read(nonce)
	plain := make([]byte, expirySize, expirySize+len(payload))
	binary.BigEndian.PutUint64(plain, uint64(r.now().Add(ttl).Unix()))
	plain = append(plain, payload...)
	out := k.aead.Seal(buf, nonce, plain, associated(buf[:headerSize], ad))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// associated is the AEAD's associated data: the header, then ad.
func associated(header, ad []byte) []byte {
	out := make([]byte, 0, len(header)+len(ad))
	return append(append(out, header...), ad...)
}

// Open checks and decrypts a value Seal made with one of the ring's keys
// and the same ad, and returns its payload. It refuses, without
// decrypting, input longer than MaxSize (ErrTooLarge); a value that fails
// authentication in any way gets ErrInvalid; an authentic value past its
// expiry gets ErrExpired.
func (r *Ring) Open(sealed string, ad []byte) ([]byte, error) {
	if len(sealed) > r.maxSize {
		return nil, fmt.Errorf("%w: %d bytes; at most %d are read", ErrTooLarge, len(sealed), r.maxSize)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(sealed)
	if err != nil || len(raw) < overhead || raw[0] != version {
		return nil, ErrInvalid
	}
	var k *ringKey
	for i := range r.keys {
		if string(r.keys[i].id[:]) == string(raw[1:headerSize]) {
			k = &r.keys[i]
			break
		}
	}
	if k == nil {
		return nil, ErrInvalid
	}
	nonce := raw[headerSize : headerSize+nonceSize]
	plain, err := k.aead.Open(nil, nonce, raw[headerSize+nonceSize:], associated(raw[:headerSize], ad))
	if err != nil {
		return nil, ErrInvalid
	}
	exp := int64(binary.BigEndian.Uint64(plain[:expirySize]))
	if r.now().Unix() >= exp {
		return nil, ErrExpired
	}
	return plain[expirySize:], nil
}
