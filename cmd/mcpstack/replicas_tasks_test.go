package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeReplicasTasks runs three `mcpstack serve --redis` processes
// behind a round-robin proxy and 2025-11-25 tasks (params.task) in one
// session: a task created through one replica is found through each of
// the others (tasks/get, tasks/result, tasks/cancel), because it belongs
// to the session's id rather than to one replica's copy of the session
// (before, every replica but the creator answered "task not found").
func TestServeReplicasTasks(t *testing.T) {
	redisURL, prefix := freshRedisPrefix(t)
	var backends []string
	for range 3 {
		u, _ := startServeReplica(t, "--redis", redisURL, "--redis-prefix", prefix)
		backends = append(backends, u)
	}
	proxy := startRRProxy(t)
	proxy.set(backends...)
	endpoint := proxy.URL + "/mcp"

	resp := mcpPost(t, endpoint, "", sessionsInit)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	resp = mcpPost(t, endpoint, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	id := 10
	rpc := func(method, params string) (map[string]any, int) {
		t.Helper()
		id++
		resp := mcpPost(t, endpoint, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
		defer resp.Body.Close()
		msgs := sseMessages(t, resp.Body)
		if resp.StatusCode != http.StatusOK || len(msgs) == 0 {
			t.Fatalf("%s on replica %d: %d %v", method, replicaOf(t, resp), resp.StatusCode, msgs)
		}
		m := msgs[len(msgs)-1]
		if m["error"] != nil {
			t.Fatalf("%s on replica %d: %v", method, replicaOf(t, resp), m["error"])
		}
		return m["result"].(map[string]any), replicaOf(t, resp)
	}
	task := func(ms int) (string, int) {
		t.Helper()
		res, at := rpc("tools/call", fmt.Sprintf(`{"name":"sleep","arguments":{"ms":%d},"task":{"ttl":600000}}`, ms))
		tk, ok := res["task"].(map[string]any)
		if !ok {
			t.Fatalf("sleep as a task: %v", res)
		}
		return tk["taskId"].(string), at
	}

	slow, created := task(600000)
	seen := map[int]bool{created: true}
	for range 3 {
		res, at := rpc("tasks/get", fmt.Sprintf(`{"taskId":%q}`, slow))
		if res["status"] != "working" {
			t.Errorf("tasks/get on replica %d: %v", at, res)
		}
		seen[at] = true
	}
	if len(seen) != 3 {
		t.Errorf("tasks/get served by %v, want all three", seen)
	}
	quick, created := task(0)
	res, at := rpc("tasks/result", fmt.Sprintf(`{"taskId":%q}`, quick))
	if at == created || !strings.Contains(jsonText(t, res), "slept") {
		t.Errorf("tasks/result on replica %d (task created on %d): %v", at, created, res)
	}
	res, at = rpc("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, slow))
	if res["status"] != "cancelled" {
		t.Errorf("tasks/cancel on replica %d: %v", at, res)
	}
}
