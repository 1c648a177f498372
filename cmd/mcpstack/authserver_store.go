package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/store/postgres"
	"github.com/mcpstack/mcpstack/store/redis"
	"github.com/mcpstack/mcpstack/store/sqlite"
)

// asRedisPrefix is the default key prefix of the authorization server's
// records in Redis (--redis-prefix). Every replica uses the same, so that
// they share their state.
const asRedisPrefix = "mcpstack:authserver:"

// asStoreFlags are the flags that choose where `mcpstack authserver`
// keeps its state: an SQLite file (one process), or PostgreSQL or Redis
// (any number of replicas behind one address).
type asStoreFlags struct {
	fs       *flag.FlagSet
	db       *string
	postgres *string
	redis    *string
	prefix   *string
}

func addASStoreFlags(fs *flag.FlagSet) asStoreFlags {
	return asStoreFlags{
		fs:       fs,
		db:       fs.String("db", "", "keep the server's state in the SQLite `FILE` (default: mcpstack/authserver.db in the user's config directory; :memory: for none)"),
		postgres: fs.String("postgres", "", "keep the server's state in the PostgreSQL database at `URL` (postgres://…), shared by every replica started with it; excludes --db and --redis"),
		redis:    fs.String("redis", "", "keep the server's state in the Redis at `URL` (redis://HOST:PORT/DB), shared by every replica started with it; excludes --db and --postgres"),
		prefix:   fs.String("redis-prefix", asRedisPrefix, "with --redis, keep the records under keys starting with `PREFIX` (replicas share it; another server on the same Redis takes another)"),
	}
}

// check refuses more than one store; it runs before anything is opened.
func (f asStoreFlags) check() error {
	n := 0
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "db", "postgres", "redis":
			n++
		}
	})
	if n > 1 {
		return usageErrorf("--db, --postgres and --redis exclude each other: give one")
	}
	if *f.postgres == "" && isSet(f.fs, "postgres") || *f.redis == "" && isSet(f.fs, "redis") {
		return usageErrorf("--postgres and --redis need a URL")
	}
	if isSet(f.fs, "redis-prefix") && *f.redis == "" {
		return usageErrorf("--redis-prefix needs --redis")
	}
	if *f.redis != "" {
		if _, err := goredis.ParseURL(*f.redis); err != nil {
			// The message of ParseURL does not repeat the URL, which may
			// hold a password.
			return usageErrorf("--redis: %v", err)
		}
	}
	return nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// errStoreUnreachable wraps a failure to reach the store at start.
var errStoreUnreachable = errors.New("the store does not answer")

// open opens the chosen store within timeout (a database that does not
// answer fails the start rather than hanging it) and returns it with the
// function that closes it.
func (f asStoreFlags) open(ctx context.Context, timeout time.Duration) (authserver.Store, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case *f.postgres != "":
		st, err := postgres.Open(ctx, *f.postgres)
		if err != nil {
			return nil, nil, storeUnreachable("postgres", "PostgreSQL", *f.postgres, err)
		}
		return st, st.Close, nil
	case *f.redis != "":
		opt, err := goredis.ParseURL(*f.redis)
		if err != nil {
			return nil, nil, usageErrorf("--redis: %v", err)
		}
		rdb := goredis.NewClient(opt)
		if err := rdb.Ping(ctx).Err(); err != nil {
			rdb.Close()
			return nil, nil, storeUnreachable("redis", "Redis", *f.redis, err)
		}
		return redis.New(rdb, *f.prefix), func() { rdb.Close() }, nil
	}
	path := *f.db
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, nil, fmt.Errorf("no place for the database (give --db): %w", err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "mcpstack"), 0o700); err != nil {
			return nil, nil, err
		}
		path = filepath.Join(dir, "mcpstack", "authserver.db")
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("--db %s: %w", path, err)
	}
	return st, func() { st.Close() }, nil
}
