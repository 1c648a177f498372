package authserver

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

// ErrBadCredentials is returned by an [Authenticator] for a wrong user name
// or password.
var ErrBadCredentials = errors.New("authserver: wrong user name or password")

// Authenticator checks the credentials typed into the login form and returns
// the user's subject identifier.
type Authenticator interface {
	Authenticate(ctx context.Context, username, password string) (subject string, err error)
}

// PasswordUsers is an [Authenticator] over a fixed set of users whose
// passwords are stored as bcrypt hashes (see [HashPassword]). The map key is
// the user name, which is also the subject.
type PasswordUsers map[string][]byte

// dummyHash is compared against when the user does not exist, so that the
// answer takes as long as for a wrong password.
var dummyHash = []byte("$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BWX4Z3fUX7OZXxkb3hX1Z5EYYbUO")

// Authenticate implements Authenticator.
func (p PasswordUsers) Authenticate(_ context.Context, username, password string) (string, error) {
	h, ok := p[username]
	if !ok {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return "", ErrBadCredentials
	}
	if err := bcrypt.CompareHashAndPassword(h, []byte(password)); err != nil {
		return "", ErrBadCredentials
	}
	return username, nil
}

// HashPassword returns the bcrypt hash of a password, for [PasswordUsers].
func HashPassword(password string) ([]byte, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return nil, fmt.Errorf("authserver: hashing a password: %w", err)
	}
	return h, nil
}
