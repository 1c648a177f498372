package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/seal"
	"github.com/mcpstack/mcpstack/store/redis"
)

// stateFlags configure how serve seals the requestState of 2026-07-28
// multi round-trip requests (basic/patterns/mrtr): with the keys of a
// file shared by every replica, or a random key of this process; for how
// long; and up to what size.
type stateFlags struct {
	keyFile string
	ttl     time.Duration
	maxSize int
	ring    *seal.Ring // built by load
	// secrets are the ring's secrets, also the keys that sign session
	// ids with --redis (mcphttp.Options.SessionIDKeys, which separates
	// the two uses by a label).
	secrets [][]byte
}

// addStateFlags defines the flags of stateFlags on fs, with the library's
// defaults, which --help shows.
func addStateFlags(fs *flag.FlagSet) *stateFlags {
	f := &stateFlags{}
	fs.StringVar(&f.keyFile, "state-key-file", "", "seal requestState with the secrets in `FILE`, one base64 secret of at least 32 bytes a line: the first seals, every one opens (rotate by adding a new first line); give every replica the same file (default: with --redis, the secrets kept in Redis under --redis-prefix, which the first replica creates; else a random key of this process)")
	fs.DurationVar(&f.ttl, "request-state-ttl", mcp.DefaultRequestStateTTL, "refuse a retry whose requestState is older than `DURATION`")
	fs.IntVar(&f.maxSize, "max-request-state", seal.DefaultMaxSize, "refuse to read, or to make, a requestState longer than `BYTES`")
	return f
}

// load checks the flags and builds the key ring.
func (f *stateFlags) load() error {
	if f.ttl <= 0 {
		return usageErrorf("--request-state-ttl must be positive")
	}
	if f.maxSize < 256 {
		return usageErrorf("--max-request-state must be at least 256")
	}
	secrets := [][]byte{seal.GenerateSecret()}
	if f.keyFile != "" {
		var err error
		if secrets, err = readSecrets(f.keyFile); err != nil {
			return err
		}
	}
	ring, err := seal.NewRing(secrets, &seal.Options{MaxSize: f.maxSize})
	if err != nil {
		return fmt.Errorf("--state-key-file: %w", err)
	}
	f.ring, f.secrets = ring, secrets
	return nil
}

// fromRedis replaces the ring of a random key by the one the replicas
// sharing shared keep in Redis (store/redis SealSecrets), unless
// --state-key-file gave the secrets. Called once at start, after load.
func (f *stateFlags) fromRedis(ctx context.Context, shared *sharedState) error {
	if f.keyFile != "" || shared == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, shared.timeout)
	defer cancel()
	secrets, err := redis.New(shared.rdb, shared.prefix).SealSecrets(ctx)
	if err != nil {
		return fmt.Errorf("--redis: the requestState keys: %w", err)
	}
	ring, err := seal.NewRing(secrets, &seal.Options{MaxSize: f.maxSize})
	if err != nil {
		return fmt.Errorf("--redis: the requestState keys under %sseal-secrets: %w", shared.prefix, err)
	}
	f.ring, f.secrets = ring, secrets
	return nil
}

// readSecrets reads a key file: one base64 secret a line (standard or URL
// alphabet, padded or not); blank lines and lines starting with # are
// skipped.
func readSecrets(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--state-key-file: %w", err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimRight(line, "=")
		s, err := base64.RawStdEncoding.DecodeString(line)
		if err != nil {
			if s, err = base64.RawURLEncoding.DecodeString(line); err != nil {
				return nil, fmt.Errorf("--state-key-file %s: line %d is not base64", path, n)
			}
		}
		if len(s) < seal.MinSecretSize {
			return nil, fmt.Errorf("--state-key-file %s: line %d holds %d bytes; a secret needs at least %d", path, n, len(s), seal.MinSecretSize)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--state-key-file %s holds no secret", path)
	}
	return out, nil
}

// server sets the sealing options in o.
func (f *stateFlags) server(o *mcp.ServerOptions) {
	if f == nil {
		return
	}
	o.StateSealer = f.ring
	o.RequestStateTTL = f.ttl
}
