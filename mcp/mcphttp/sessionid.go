package mcphttp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// Signed session ids (Options.SessionIDKeys). A replica that does not hold
// a session reads its record from the shared store to rebuild or resume it
// (replicas.go, shared.go). Without a check before that read, anyone can
// make every request with a made-up Mcp-Session-Id cost a store round
// trip: a flood of random ids becomes a flood of store reads, and can trip
// the store's breaker for the legitimate rebuilds. With keys, the ids this
// handler mints carry a MAC under a key every replica shares, and an id
// whose MAC does not verify is answered 404 before any store call.
//
// An id is base32 (RFC 4648, no padding) of sessionNonceSize random bytes
// followed by sessionMACSize bytes of HMAC-SHA256(key, label || random):
// 52 visible ASCII characters, as MCP 2025-11-25
// basic/transports#session-management asks of a session id; opaque to the
// client.

const (
	sessionNonceSize = 16 // 128 bits, as rand.Text
	sessionMACSize   = 16 // a forgery succeeds with probability 2^-128
	// signedIDLen is the length of a signed session id.
	signedIDLen = ((sessionNonceSize+sessionMACSize)*8 + 4) / 5
	// sessionIDLabel separates this MAC from any other use of the keys
	// (the requestState seal shares them in mcpstack serve).
	sessionIDLabel = "mcpstack mcphttp session id v1\x00"
)

var sessionIDEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// sessionMAC returns the MAC of nonce under key.
func sessionMAC(key, nonce []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sessionIDLabel))
	m.Write(nonce)
	return m.Sum(nil)[:sessionMACSize]
}

// mintSessionID returns a new session id: signed with the first of keys,
// or, without keys, rand.Text as before.
func mintSessionID(keys [][]byte) string {
	if len(keys) == 0 {
		return rand.Text()
	}
	var b [sessionNonceSize + sessionMACSize]byte
	rand.Read(b[:sessionNonceSize])
	copy(b[sessionNonceSize:], sessionMAC(keys[0], b[:sessionNonceSize]))
	return sessionIDEncoding.EncodeToString(b[:])
}

// signedSessionID reports whether id carries a MAC that one of keys
// verifies (in constant time). It is called only for ids this handler
// does not hold, before the store is asked about them; it allocates
// nothing for an id of the wrong length.
func signedSessionID(keys [][]byte, id string) bool {
	if len(id) != signedIDLen {
		return false
	}
	var b [sessionNonceSize + sessionMACSize + 8]byte
	n, err := sessionIDEncoding.Decode(b[:], []byte(id))
	if err != nil || n != sessionNonceSize+sessionMACSize || !canonicalTail(id[len(id)-1]) {
		return false
	}
	for _, k := range keys {
		if hmac.Equal(sessionMAC(k, b[:sessionNonceSize]), b[sessionNonceSize:n]) {
			return true
		}
	}
	return false
}

// canonicalTail reports whether c, the last character of a signed id,
// has its unused low bits zero, as encoding makes them: the decoder
// ignores them, and an id with others set would name the same nonce and
// MAC but not the same session, each costing a store read.
func canonicalTail(c byte) bool {
	i := strings.IndexByte(base32Alphabet, c)
	unused := 5*signedIDLen - 8*(sessionNonceSize+sessionMACSize)
	return i >= 0 && i&(1<<unused-1) == 0
}

const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// sharedID reports whether the store may be asked about session id, which
// this handler does not hold: always without Options.SessionIDKeys, else
// only when its MAC verifies.
func (h *Handler) sharedID(id string) bool {
	return len(h.opts.SessionIDKeys) == 0 || signedSessionID(h.opts.SessionIDKeys, id)
}
