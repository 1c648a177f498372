// Command eraserver is a stdio MCP server for the client's era tests
// (client_probe_sibling_test.go), built by the test. Usage:
//
//	eraserver MODE LOG
//
// MODE is "fragile" (a legacy server that exits on any request before
// initialize), "silent" (a legacy server that ignores such requests) or
// "modern" (it answers server/discover and refuses initialize). Every
// request it reads is appended to the file LOG as "PID METHOD".
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	mode, logPath := os.Args[1], os.Args[2]
	logf, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20)
	out := json.NewEncoder(os.Stdout)
	initialized := false
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.Method == "" {
			continue
		}
		fmt.Fprintf(logf, "%d %s\n", os.Getpid(), m.Method)
		if m.ID == nil {
			continue // a notification
		}
		reply := func(result any) {
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		}
		fail := func(code int, msg string) {
			_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": code, "message": msg}})
		}
		switch {
		case mode == "modern" && m.Method == "server/discover":
			reply(map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
				"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}},
				"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "eraserver", "version": "1"}}})
		case mode == "modern" && m.Method == "initialize":
			fail(-32601, "Method not found")
		case mode == "modern":
			reply(map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": []any{}})
		case m.Method == "initialize":
			initialized = true
			reply(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "eraserver", "version": "1"}})
		case !initialized && mode == "fragile":
			os.Exit(3) // what some legacy servers do
		case !initialized:
			// silent: no answer before initialize
		default:
			reply(map[string]any{"tools": []any{}})
		}
	}
}
