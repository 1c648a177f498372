package mcp_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// A tool returns its result as content blocks, and optionally as a JSON
// object too.
func ExampleCallToolResult() {
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: `{"celsius":21.5}`}},
		StructuredContent: json.RawMessage(`{"celsius":21.5}`),
	}
	if err := res.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	data, _ := json.Marshal(res)
	fmt.Println(string(data))

	// A failed call is still a result, flagged with isError.
	failed := true
	data, _ = json.Marshal(mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: "city not found"}},
		IsError: &failed,
	})
	fmt.Println(string(data))
	// Output:
	// {"content":[{"type":"text","text":"{\"celsius\":21.5}"}],"structuredContent":{"celsius":21.5}}
	// {"content":[{"type":"text","text":"city not found"}],"isError":true}
}

// Decoding a result picks the concrete type of each content block.
func ExampleCallToolResult_decode() {
	var res mcp.CallToolResult
	err := json.Unmarshal([]byte(`{"content":[
		{"type":"text","text":"see the log"},
		{"type":"resource_link","uri":"file:///var/log/app.log","name":"app.log"}]}`), &res)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Println("text:", c.Text)
		case *mcp.ResourceLink:
			fmt.Println("link:", c.URI)
		}
	}

	// A block type that a tool result cannot hold is refused.
	err = json.Unmarshal([]byte(`{"content":[{"type":"tool_use","id":"1","name":"x","input":{}}]}`), &res)
	fmt.Println(errors.Is(err, mcp.ErrInvalidType))
	// Output:
	// text: see the log
	// link: file:///var/log/app.log
	// true
}

func ExampleValidMetaKey() {
	for _, key := range []string{
		"progressToken",
		"com.example/trace-id",
		"com.example/",
		"a..b/x",
		"com.example/-x",
	} {
		if err := mcp.ValidMetaKey(key); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%q is valid; reserved: %v\n", key, mcp.MetaKeyReserved(key))
	}
	fmt.Println(mcp.IsReservedMetaPrefix("io.modelcontextprotocol/"), mcp.IsReservedMetaPrefix("com.example.mcp/"))
	// Output:
	// "progressToken" is valid; reserved: false
	// "com.example/trace-id" is valid; reserved: false
	// "com.example/" is valid; reserved: false
	// mcp: invalid _meta key "a..b/x": prefix label 2 is empty
	// mcp: invalid _meta key "com.example/-x": name must start with a letter or digit, not '-'
	// true false
}

// A request carries its progress token in params._meta. A client sets it
// on the params it passes to a call such as ClientSession.CallTool; here
// the request is encoded and decoded by hand, as the session does.
func ExampleMeta_SetProgressToken() {
	params := &mcp.CallToolRequestParams{Name: "build"}
	params.Meta.SetProgressToken(jsonrpc.StringID("p-1"))
	raw, _ := json.Marshal(params)
	data, _ := jsonrpc.Encode(&jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodToolsCall, Params: raw})
	fmt.Println(string(data))

	msg, _ := jsonrpc.Decode(data)
	var got mcp.CallToolRequestParams
	_ = json.Unmarshal(msg.(*jsonrpc.Request).Params, &got)
	tok, ok := got.Meta.ProgressToken()
	fmt.Println(tok, ok, got.Validate())
	// Output:
	// {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","_meta":{"progressToken":"p-1"}}}
	// p-1 true <nil>
}
