package main

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// privateRedis starts a redis-server of the test's own (so that its
// command counts are the test's alone) and returns its URL and a client.
func privateRedis(t *testing.T) (string, *goredis.Client) {
	t.Helper()
	serviceURL(t, "MCPSTACK_REDIS_URL") // skips unless the services are configured
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGKILL); cmd.Wait() })
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i > 200 {
			t.Fatalf("redis-server on %s does not answer", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "redis://" + addr + "/0", c
}

var hgetCalls = regexp.MustCompile(`(?m)^cmdstat_hget:calls=(\d+)`)

// hgets returns how many HGET the Redis of c has run (SessionRecord is one).
func hgets(t *testing.T, c *goredis.Client) int {
	t.Helper()
	s, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := hgetCalls.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestServeReplicasForgedSessionIDs: a flood of requests with made-up
// Mcp-Session-Id values against a `serve --redis` replica gets 404 and
// costs Redis nothing (the ids the replicas mint carry a MAC under the
// secrets they share, checked before any read), while a real session
// created on one replica is still served by the other.
//
// On main every forged id costs one HGET of its record.
func TestServeReplicasForgedSessionIDs(t *testing.T) {
	redisURL, rdb := privateRedis(t)
	backends, _ := startServeReplicas(t, 2, "--redis", redisURL, "--redis-prefix", "forged:", "--redis-recheck", "0")

	resp := mcpPost(t, backends[0]+"/mcp", "", sessionsInit)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	resp = mcpPost(t, backends[1]+"/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized on the other replica: %d", resp.StatusCode)
	}

	before := hgets(t, rdb)
	const n = 100
	for i := range n {
		id := rand.Text()
		if i%2 == 1 {
			id += rand.Text() // the length of a signed id
		}
		for _, m := range []struct{ method, last string }{{http.MethodPost, ""}, {http.MethodGet, "1-0_3"}, {http.MethodDelete, ""}} {
			var body io.Reader
			if m.method == http.MethodPost {
				body = strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			}
			req, _ := http.NewRequest(m.method, backends[1]+"/mcp", body)
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", replicaVersion)
			if m.last != "" {
				req.Header.Set("Last-Event-ID", m.last)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("%s with forged id %q: %d, want 404", m.method, id, resp.StatusCode)
			}
		}
	}
	// A few HGETs of other origins are tolerated; a read per forged
	// request (3n) is not.
	if d := hgets(t, rdb) - before; d > n/10 {
		t.Errorf("%d forged requests cost %d HGET", 3*n, d)
	}
	resp = mcpPost(t, backends[1]+"/mcp", sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the real session on the other replica: %d", resp.StatusCode)
	}
}
