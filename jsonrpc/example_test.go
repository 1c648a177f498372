package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Two connections joined by an in-memory pipe: one serves a method, the
// other calls it. Either side may call the other. Params are a JSON object,
// as MCP requires.
func ExampleNewConn() {
	a, b := jsonrpc.NewPipe()
	server := jsonrpc.NewConn(a, jsonrpc.ConnOptions{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method != "add" {
				return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s", req.Method)
			}
			var p struct {
				Xs []int `json:"xs"`
			}
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
			}
			sum := 0
			for _, x := range p.Xs {
				sum += x
			}
			return map[string]int{"sum": sum}, nil
		}),
	})
	defer server.Close()
	client := jsonrpc.NewConn(b, jsonrpc.ConnOptions{})
	defer client.Close()

	var out struct {
		Sum int `json:"sum"`
	}
	if err := client.Call(context.Background(), "add", map[string][]int{"xs": {1, 2, 3}}, &out); err != nil {
		log.Fatal(err)
	}
	fmt.Println("sum:", out.Sum)

	err := client.Call(context.Background(), "sub", nil, nil)
	var je *jsonrpc.Error
	fmt.Println(errors.As(err, &je), je.Code)
	// Output:
	// sum: 6
	// true -32601
}

// Malformed input gets the error response to send back: with the
// request's id when it could be read, and with no id (never a null one, as
// MCP's schema requires) when it could not.
func ExampleDecode() {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":8,"method":42}`,
		`{"jsonrpc":"2.0","id":9,`,
	} {
		m, err := jsonrpc.Decode([]byte(in))
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			b, _ := jsonrpc.Encode(de.Response())
			fmt.Printf("%s\n", b)
			continue
		}
		req := m.(*jsonrpc.Request)
		fmt.Printf("request %s %s %s\n", req.ID, req.Method, req.Params)
	}
	// Output:
	// request 7 tools/call {"name":"echo"}
	// {"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"Invalid Request: \"method\" must be a string"}}
	// {"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: invalid JSON"}}
}

// A transport that decodes many messages gives its Decoder the method
// names it expects, so that decoding them allocates no method string.
func ExampleDecoder() {
	dec := jsonrpc.NewDecoder("initialize", "tools/call", "notifications/initialized")
	m, err := dec.Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		log.Fatal(err)
	}
	req := m.(*jsonrpc.Request)
	fmt.Println(req.Method, req.IsNotification())
	// Output:
	// notifications/initialized true
}
