package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// TestServeTasksLegacy: `mcpstack serve` runs the sleep tool as a
// 2025-11-25 task in a session, in memory and with --redis (where
// tasks/result waits on the Redis store): tasks/get reports it, and
// tasks/result returns its result; a second task is cancelled with
// tasks/cancel.
func TestServeTasksLegacy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		redis bool
	}{{"memory", false}, {"redis", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			if tc.redis {
				redisURL, prefix := freshRedisPrefix(t)
				args = []string{"--redis", redisURL, "--redis-prefix", prefix}
			}
			base, _ := startServeReplica(t, args...)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{EraPolicy: mcp.EraPolicyLegacy})
			cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: base + "/mcp"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for _, err := range cs.Tools(ctx, nil) { // learns each tool's task support
				if err != nil {
					t.Fatal(err)
				}
			}
			res, err := cs.CallToolTask(ctx, &mcp.CallToolRequestParams{Name: "sleep", Arguments: json.RawMessage(`{"ms":300}`)})
			if err != nil || !strings.Contains(jsonText(t, res), "slept 300 ms") {
				t.Fatalf("sleep as a task: %v, %v", res, err)
			}
			ct, err := cs.CallToolAsTask(ctx, &mcp.CallToolRequestParams{Name: "sleep", Arguments: json.RawMessage(`{"ms":600000}`)})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := cs.GetTask(ctx, ct.Task.TaskID); err != nil || got.Status != mcp.TaskStatusWorking {
				t.Fatalf("tasks/get: %+v, %v", got, err)
			}
			if got, err := cs.CancelTask(ctx, ct.Task.TaskID); err != nil || got.Status != mcp.TaskStatusCancelled {
				t.Fatalf("tasks/cancel: %+v, %v", got, err)
			}
			if _, err := cs.TaskResult(ctx, ct.Task.TaskID); err == nil {
				t.Fatal("tasks/result of a cancelled task succeeded")
			}
		})
	}
}
