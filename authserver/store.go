package authserver

import (
	"context"
	"errors"
	"time"

	"github.com/mcpstack/mcpstack/oauth"
)

// Errors a [Store] returns.
var (
	// ErrNotFound reports a record the store does not hold.
	ErrNotFound = errors.New("authserver: not found")
	// ErrAlreadyUsed reports a single-use record (an authorization code, a
	// refresh token, a nonce) presented a second time. Stores return it
	// together with the record, so the server can revoke what it issued.
	ErrAlreadyUsed = errors.New("authserver: already used")
	// ErrExists reports a record created twice.
	ErrExists = errors.New("authserver: already exists")
)

// Client is a registered client: one created by Dynamic Client Registration
// or by the embedding program. Clients identified by a metadata document URL
// are not stored; their documents are fetched and cached instead.
type Client struct {
	// Metadata is the registered metadata; Metadata.ClientID is the id.
	Metadata oauth.ClientMetadata
	// SecretHash is the SHA-256 of the client secret, empty for public
	// clients. Secrets are random and long, so a fast hash is enough.
	SecretHash []byte
	// IssuedAt is the registration time.
	IssuedAt time.Time
	// UnusedExpiresAt, if set, is when [Store.PruneClients] may delete the
	// client if it has not been used by then; [Store.MarkClientUsed]
	// clears it. Dynamic Client Registration sets it to the registration
	// time plus [Config.UnusedClientTTL], so that registrations nobody
	// uses do not pile up; clients the embedding program creates leave it
	// zero and are never pruned.
	UnusedExpiresAt time.Time
}

// ID returns the client identifier.
func (c Client) ID() string { return c.Metadata.ClientID }

// AuthMethod returns the token endpoint authentication method, with the
// RFC 7591 default client_secret_basic.
func (c Client) AuthMethod() string {
	if c.Metadata.TokenEndpointAuthMethod == "" {
		return oauth.AuthMethodClientSecretBasic
	}
	return c.Metadata.TokenEndpointAuthMethod
}

// Code is an issued authorization code, stored under the SHA-256 of the code.
type Code struct {
	Hash          string
	ClientID      string
	RedirectURI   string
	CodeChallenge string
	Resource      string
	Subject       string
	Scopes        []string
	// FamilyID names every token issued from this code, so that a replayed
	// code can revoke them all.
	FamilyID  string
	ExpiresAt time.Time
}

// RefreshToken is an issued refresh token, stored under the SHA-256 of the
// token. Each use rotates it: the old one is marked used and a new one of the
// same family is issued.
type RefreshToken struct {
	Hash      string
	FamilyID  string
	ClientID  string
	Subject   string
	Resource  string
	Scopes    []string
	ExpiresAt time.Time
}

// SigningKey is a private key the server signs tokens with, PKCS #8 DER
// encoded. The newest key signs; an older one stays in the JWKS for
// [Config.KeyRetention] after its successor was created.
type SigningKey struct {
	ID        string
	Algorithm string
	PKCS8     []byte
	CreatedAt time.Time
}

// CookieKey is a secret that signs login sessions, CSRF tokens and the
// authorization request carried in the login and consent forms (HMAC-SHA256).
// The newest key signs; an older one verifies for
// [Config.CookieKeyRetention] after its successor was created.
type CookieKey struct {
	ID        string
	Secret    []byte
	CreatedAt time.Time
}

// UpstreamState is a sign-in in progress at the upstream provider
// ([Config.Upstream]): created when the user has consented, just before the
// browser is sent upstream, and taken once when the provider sends the
// browser back. It is stored under the SHA-256 of the state value sent
// upstream; Data is the server's own encoding of what it needs at the
// callback (the authorization request, the PKCE verifier, the OpenID
// Connect nonce, the browser binding), opaque to the store.
type UpstreamState struct {
	Hash      string
	Data      []byte
	ExpiresAt time.Time
}

// UpstreamGrant holds a user's tokens at the upstream provider, encrypted
// by the server (AES-256-GCM) before it reaches the store: the store never
// sees them in the clear. Subject is our (namespaced) subject.
type UpstreamGrant struct {
	Subject   string
	Sealed    []byte
	UpdatedAt time.Time
}

// Store keeps the authorization server's state. Implementations must be safe
// for concurrent use, and the "Use", "Take", "Redeem" and "Rotate" methods
// must be atomic: of two concurrent calls with the same key, exactly one
// succeeds. RedeemCode and RotateRefreshToken change two records, and must
// change both or neither (one transaction, one script, one lock): a grant
// whose old token was spent but whose new one was never stored is lost.
// The packages store/memory, store/sqlite, store/postgres and store/redis
// implement it, and store/storetest checks an implementation.
type Store interface {
	// CreateClient stores a new client; ErrExists if its id is taken.
	CreateClient(ctx context.Context, c Client) error
	// Client returns a client by id, or ErrNotFound.
	Client(ctx context.Context, id string) (Client, error)
	// MarkClientUsed clears a client's UnusedExpiresAt, so that pruning
	// keeps it; ErrNotFound if there is no such client. The server calls
	// it once, on a client's first use.
	MarkClientUsed(ctx context.Context, id string) error
	// PruneClients deletes every client whose UnusedExpiresAt is set and
	// not after now, and returns how many it deleted. A store whose
	// records expire by themselves (Redis) may delete them at
	// UnusedExpiresAt on its own and return 0.
	PruneClients(ctx context.Context, now time.Time) (int, error)

	// SaveCode stores an authorization code.
	SaveCode(ctx context.Context, c Code) error
	// TakeCode marks a code used and returns it. A code already taken is
	// returned with ErrAlreadyUsed; an unknown one gives ErrNotFound.
	TakeCode(ctx context.Context, hash string) (Code, error)
	// Code returns a code without taking it: the server checks a request
	// against it before spending it. A code already taken is returned
	// with ErrAlreadyUsed; an unknown one gives ErrNotFound.
	Code(ctx context.Context, hash string) (Code, error)
	// RedeemCode marks a code used and, in the same atomic step, stores
	// first (the grant's first refresh token) unless it is nil. A code
	// already taken is returned with ErrAlreadyUsed, an unknown one gives
	// ErrNotFound, and a first whose hash is taken gives ErrExists; in
	// all three cases nothing changes.
	RedeemCode(ctx context.Context, hash string, first *RefreshToken) (Code, error)

	// SaveRefreshToken stores a refresh token.
	SaveRefreshToken(ctx context.Context, t RefreshToken) error
	// UseRefreshToken marks a refresh token used and returns it. A token
	// already used is returned with ErrAlreadyUsed; an unknown one gives
	// ErrNotFound.
	UseRefreshToken(ctx context.Context, hash string) (RefreshToken, error)
	// RefreshToken returns a refresh token without using it. A token
	// already used is returned with ErrAlreadyUsed; an unknown one gives
	// ErrNotFound.
	RefreshToken(ctx context.Context, hash string) (RefreshToken, error)
	// RotateRefreshToken marks the refresh token hash used and stores its
	// successor next, in one atomic step, and returns the old token. A
	// token already used is returned with ErrAlreadyUsed, an unknown one
	// gives ErrNotFound, and a next whose hash is taken gives ErrExists;
	// in all three cases nothing changes.
	RotateRefreshToken(ctx context.Context, hash string, next RefreshToken) (RefreshToken, error)

	// RevokeFamily revokes every token of a family (refresh and access)
	// until the given time, after which all of them have expired anyway.
	RevokeFamily(ctx context.Context, familyID string, until time.Time) error
	// FamilyRevoked reports whether a family was revoked.
	FamilyRevoked(ctx context.Context, familyID string) (bool, error)

	// UseNonce records a one-time value (a client assertion's jti) until
	// the given time. It returns ErrAlreadyUsed if the value was recorded
	// and has not expired.
	UseNonce(ctx context.Context, key string, until time.Time) error

	// SaveSigningKey stores a signing key.
	SaveSigningKey(ctx context.Context, k SigningKey) error
	// SigningKeys returns the stored signing keys, oldest first.
	SigningKeys(ctx context.Context) ([]SigningKey, error)

	// SaveCookieKey stores a cookie key; ErrExists if its id is taken.
	SaveCookieKey(ctx context.Context, k CookieKey) error
	// CookieKeys returns the stored cookie keys, oldest first (by
	// CreatedAt, then ID). Servers on one store share them, so that a
	// login made at one is honoured at the others and after a restart.
	CookieKeys(ctx context.Context) ([]CookieKey, error)

	// ApproveClient records that the user subject approved the client
	// clientID (a consent given on this server's own page), so that the
	// next authorization of that client by that user needs no consent.
	// Approving twice is not an error. Used with [Config.Upstream]: the
	// per-user registry of approved clients the MCP security best
	// practices require of a server with one static upstream client id.
	ApproveClient(ctx context.Context, subject, clientID string, at time.Time) error
	// ClientApproved reports whether the user subject approved clientID.
	ClientApproved(ctx context.Context, subject, clientID string) (bool, error)

	// SaveUpstreamState stores a pending upstream sign-in; ErrExists if
	// its hash is taken.
	SaveUpstreamState(ctx context.Context, st UpstreamState) error
	// TakeUpstreamState deletes a pending upstream sign-in and returns it,
	// atomically: of two concurrent calls with one hash, one gets the
	// record and the other ErrNotFound, as does a hash never saved. The
	// record may have expired; the server checks ExpiresAt. A store may
	// forget records after ExpiresAt.
	TakeUpstreamState(ctx context.Context, hash string) (UpstreamState, error)

	// SaveUpstreamGrant stores a user's upstream tokens, replacing any
	// the user had.
	SaveUpstreamGrant(ctx context.Context, g UpstreamGrant) error
	// UpstreamGrant returns a user's upstream tokens, or ErrNotFound.
	UpstreamGrant(ctx context.Context, subject string) (UpstreamGrant, error)
}
