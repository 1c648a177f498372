package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

const defaultsSchema = `{"type":"object","properties":{
	"name":{"type":"string","default":"John Doe"},
	"age":{"type":"integer","default":30,"minimum":0},
	"score":{"type":"number","default":95.5},
	"status":{"type":"string","enum":["active","inactive"],"default":"active"},
	"verified":{"type":"boolean","default":true},
	"email":{"type":"string","format":"email"}},"required":[]}`

func TestElicitationForm(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		answer   *ElicitResult
		wantCode int64 // 0: success
		want     map[string]any
		wantAct  ElicitAction
	}{
		{"accept empty: every default", &ElicitResult{Action: ElicitActionAccept}, 0,
			map[string]any{"name": "John Doe", "age": 30.0, "score": 95.5, "status": "active", "verified": true}, ElicitActionAccept},
		{"accept with values: defaults fill the rest", &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "Ann", "age": 41}}, 0,
			map[string]any{"name": "Ann", "age": 41.0, "score": 95.5, "status": "active", "verified": true}, ElicitActionAccept},
		{"content breaking the schema", &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"age": -3}}, jsonrpc.CodeInternalError, nil, ""},
		{"value outside the enum", &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"status": "gone"}}, jsonrpc.CodeInternalError, nil, ""},
		{"value of a disallowed type", &ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": map[string]any{}}}, jsonrpc.CodeInternalError, nil, ""},
		{"decline drops content", &ElicitResult{Action: ElicitActionDecline, Content: map[string]any{"name": "x"}}, 0, nil, ElicitActionDecline},
		{"cancel", &ElicitResult{Action: ElicitActionCancel}, 0, nil, ElicitActionCancel},
		{"unknown action", &ElicitResult{Action: "maybe"}, jsonrpc.CodeInternalError, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(&ClientOptions{ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
				r := *tt.answer
				return &r, nil
			}})
			p, _ := connectPeer(t, c, ServerCapabilities{}, nil)
			var raw json.RawMessage
			err := p.conn.Call(ctx, MethodElicitationCreate, json.RawMessage(`{"message":"who?","requestedSchema":`+defaultsSchema+`}`), &raw)
			if tt.wantCode != 0 {
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != tt.wantCode {
					t.Fatalf("err = %v, want code %d", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Action  ElicitAction   `json:"action"`
				Content map[string]any `json:"content"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if got.Action != tt.wantAct || !reflect.DeepEqual(got.Content, tt.want) {
				t.Errorf("got %s, want action %s content %v", raw, tt.wantAct, tt.want)
			}
		})
	}
}

func TestElicitationModes(t *testing.T) {
	ctx := context.Background()
	accept := func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
		return &ElicitResult{Action: ElicitActionAccept}, nil
	}
	form := `{"message":"m","requestedSchema":{"type":"object","properties":{}}}`
	url := `{"mode":"url","message":"m","elicitationId":"e1","url":"https://example.com/pay"}`
	tests := []struct {
		name     string
		opts     ClientOptions
		params   string
		wantCode int64
	}{
		{"form, form declared", ClientOptions{ElicitationHandler: accept}, form, 0},
		{"url, url not declared", ClientOptions{ElicitationHandler: accept}, url, jsonrpc.CodeInvalidParams},
		{"url, url declared", ClientOptions{ElicitationHandler: accept, ElicitationURLMode: true}, url, 0},
		{"form refused when only url declared", ClientOptions{ElicitationHandler: accept, Capabilities: &ClientCapabilities{Elicitation: &ElicitationCapability{URL: &Capability{}}}}, form, jsonrpc.CodeInvalidParams},
		{"no handler", ClientOptions{}, form, jsonrpc.CodeMethodNotFound},
		{"unsupported dialect", ClientOptions{ElicitationHandler: accept}, `{"message":"m","requestedSchema":{"$schema":"https://example.com/nope","type":"object","properties":{}}}`, jsonrpc.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := connectPeer(t, newTestClient(&tt.opts), ServerCapabilities{}, nil)
			var res ElicitResult
			err := p.conn.Call(ctx, MethodElicitationCreate, json.RawMessage(tt.params), &res)
			if tt.wantCode == 0 {
				if err != nil || res.Action != ElicitActionAccept || len(res.Content) > 0 && tt.params == url {
					t.Fatalf("got %+v, %v", res, err)
				}
				return
			}
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != tt.wantCode {
				t.Fatalf("err = %v, want code %d", err, tt.wantCode)
			}
		})
	}
}

func TestURLElicitationCompletion(t *testing.T) {
	ctx := context.Background()
	completed := make(chan string, 8)
	c := newTestClient(&ClientOptions{
		ElicitationURLMode: true,
		ElicitationHandler: func(context.Context, *ClientSession, ElicitRequestParams) (*ElicitResult, error) {
			return &ElicitResult{Action: ElicitActionAccept}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, _ *ClientSession, p *ElicitationCompleteNotificationParams) {
			completed <- p.ElicitationID
		},
	})
	p, cs := connectPeer(t, c, ServerCapabilities{Tools: &ToolsCapability{}}, map[string]func(json.RawMessage) (any, error){
		MethodToolsCall: func(json.RawMessage) (any, error) {
			data, _ := json.Marshal(URLElicitationRequiredData{Elicitations: []ElicitRequestURLParams{{ElicitationID: "e2", URL: "https://example.com/oauth", Message: "connect"}}})
			return nil, &jsonrpc.Error{Code: CodeURLElicitationRequired, Message: "connect your account", Data: data}
		},
	})
	// e1 arrives as a request; e2 in the data of a -32042 error.
	if err := p.conn.Call(ctx, MethodElicitationCreate, json.RawMessage(`{"mode":"url","message":"m","elicitationId":"e1","url":"https://example.com/pay"}`), nil); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CallTool(ctx, &CallToolRequestParams{Name: "x"})
	var ure *URLElicitationRequiredError
	if !errors.As(err, &ure) {
		t.Fatalf("CallTool = %v, want a *URLElicitationRequiredError", err)
	}
	if len(ure.Data.Elicitations) != 1 || ure.Data.Elicitations[0].ElicitationID != "e2" || ure.Data.Elicitations[0].URL != "https://example.com/oauth" {
		t.Errorf("elicitations = %+v", ure.Data.Elicitations)
	}
	// Unknown ids, repeats and malformed notifications are ignored.
	// Notifications and pings are handled in order on the client's read
	// loop, so once the ping is answered every notification was seen.
	for _, id := range []string{"nope", "e1", "e1", "e2", "e2"} {
		p.conn.Notify(ctx, NotificationElicitationComplete, &ElicitationCompleteNotificationParams{ElicitationID: id})
	}
	p.conn.Notify(ctx, NotificationElicitationComplete, json.RawMessage(`{}`))
	if err := p.conn.Call(ctx, MethodPing, nil, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		got = append(got, <-completed)
	}
	if !reflect.DeepEqual(got, []string{"e1", "e2"}) {
		t.Errorf("completions delivered: %v, want [e1 e2]", got)
	}
	select {
	case id := <-completed:
		t.Errorf("unexpected completion %q", id)
	default:
	}
}
