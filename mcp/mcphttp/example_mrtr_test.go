package mcphttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/seal"
)

// A tool handler that needs input from the user asks for it once, in its
// own code, with mcp.ServerSession.Ask. In a 2025-11-25 session the ask is a request to the client,
// answered on the spot. In a 2026-07-28 request the server answers
// InputRequiredResult instead, with the ask and a sealed requestState;
// the client's retry runs the handler again, and the same ask returns the
// answer. Remember keeps a value from the first round to the last.
func Example_askOnce() {
	// Every replica that may take a retry gets the same key ring; here
	// there is one process. A new secret goes first to rotate.
	ring, err := seal.NewRing([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, nil)
	if err != nil {
		log.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, &mcp.ServerOptions{StateSealer: ring})
	err = s.AddTool(&mcp.Tool{Name: "greet", Description: "Greet the user by name."},
		func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			// Computed in the first round only, then carried.
			ticket, err := mcp.Remember(ctx, "ticket", func() (string, error) { return "T-1", nil })
			if err != nil {
				return nil, err
			}
			in, err := ss.Ask(ctx, mcp.InputRequests{
				"user_name": mcp.ElicitInput(&mcp.ElicitRequestFormParams{
					Message: "What is your name?",
					RequestedSchema: mcp.RequestedSchema{
						Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}},
						Required:   []string{"name"},
					},
				}),
			})
			if err != nil {
				return nil, err // in a 2026-07-28 request: mcp.ErrInputRequired
			}
			name, _ := in.Elicit("user_name").Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + name + "! (" + ticket + ")"}}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	// 2025-11-25: a session; the ask is an elicitation/create request.
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ClientSession, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	ct, st := mcp.InMemoryTransports()
	ctx := context.Background()
	if _, err := s.Connect(ctx, st); err != nil {
		log.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct)
	if err != nil {
		log.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolRequestParams{Name: "greet"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("2025-11-25:", res.Content[0].(*mcp.TextContent).Text)
	cs.Close()

	// 2026-07-28: no session; each request carries its own _meta.
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	first := postModern(ts.URL, 1, `{"name":"greet",`+meta+`}`)
	var irr mcp.InputRequiredResult
	if err := json.Unmarshal(first, &irr); err != nil {
		log.Fatal(err)
	}
	fmt.Println("2026-07-28 round 1:", irr.InputRequests.Keys(), irr.InputRequests["user_name"].Method())
	// The client asks the user, then retries with a new id, the answer and
	// the requestState, unchanged.
	answers := mcp.InputResponses{}
	if err := answers.Put("user_name", &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}); err != nil {
		log.Fatal(err)
	}
	retry, _ := json.Marshal(map[string]any{"name": "greet", "inputResponses": answers, "requestState": irr.RequestState})
	second := postModern(ts.URL, 2, strings.TrimSuffix(string(retry), "}")+","+meta+"}")
	var done mcp.CallToolResult
	if err := json.Unmarshal(second, &done); err != nil {
		log.Fatal(err)
	}
	fmt.Println("2026-07-28 round 2:", done.Content[0].(*mcp.TextContent).Text)
	// Output:
	// 2025-11-25: Hello, Ada! (T-1)
	// 2026-07-28 round 1: [user_name] elicitation/create
	// 2026-07-28 round 2: Hello, Ada! (T-1)
}

// postModern posts a 2026-07-28 tools/call with params and returns its
// result.
func postModern(url string, id int, params string) json.RawMessage {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil || msg.Error != nil {
		log.Fatalf("%s: %v", data, err)
	}
	return msg.Result
}
