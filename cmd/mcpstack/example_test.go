package main

import (
	"encoding/json"
	"fmt"

	"github.com/mcpstack/mcpstack/mcp"
)

// The client draws progress notifications as a bar when the total is
// known, and as a count otherwise.
func Example_progressBar() {
	total := 10.0
	fmt.Println(progressBar(&mcp.ProgressNotificationParams{Progress: 3, Total: &total, Message: "indexing"}))
	fmt.Println(progressBar(&mcp.ProgressNotificationParams{Progress: 42}))
	// Output:
	// [#########.....................]  30% 3/10 indexing
	// [??????????????????????????????] 42
}

// The client's tool listing summarizes each input schema: required
// arguments first, optional ones marked with "?".
func Example_schemaArgs() {
	fmt.Println(schemaArgs(json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},"max":{"type":"integer"}},"required":["url"]}`)))
	// Output:
	// url: string, max?: integer
}
