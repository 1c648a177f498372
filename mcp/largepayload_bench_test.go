package mcp

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
)

// echoSchemaText is the echo tool's input schema in the large-payload
// benchmarks, the same as bench/ uses.
const echoSchemaText = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// largeEchoArgs are the typed echo tool's arguments.
type largeEchoArgs struct {
	Text string `json:"text"`
}

// largeText returns n bytes of printable ASCII with no character that JSON
// escapes, like the bench's 1 MiB payload.
func largeText(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[i%len(alphabet)]
	}
	return string(b)
}

// echoCallBody is a tools/call of echo with text as its argument.
func echoCallBody(id int, text string) string {
	var b strings.Builder
	b.Grow(len(text) + 128)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(strconv.Itoa(id))
	b.WriteString(`,"method":"tools/call","params":{"name":"echo","arguments":{"text":`)
	b.Write(appendQuoted(nil, text))
	b.WriteString(`}}}`)
	return b.String()
}

func appendQuoted(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// BenchmarkLargeEchoStages measures each JSON stage of a 1 MiB echo on its
// own, in the order the server runs them.
func BenchmarkLargeEchoStages(b *testing.B) {
	text := largeText(1 << 20)
	msg := []byte(echoCallBody(1, text))
	m, err := jsonrpc.Decode(msg)
	if err != nil {
		b.Fatal(err)
	}
	params := m.(*jsonrpc.Request).Params
	var p CallToolRequestParams
	if err := parseParams(params, &p); err != nil {
		b.Fatal(err)
	}
	schema, err := jsonschema.Compile([]byte(echoSchemaText))
	if err != nil {
		b.Fatal(err)
	}
	result := &CallToolResult{Content: []Content{&TextContent{Text: text}}}
	raw, err := json.Marshal(result)
	if err != nil {
		b.Fatal(err)
	}
	resp := &jsonrpc.Response{ID: jsonrpc.Int64ID(1), Result: raw}
	run := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// Pipeline is the server's whole JSON work on one call, in order, as
	// the current code does it.
	buf := make([]byte, 0, len(raw)+64)
	dec := newArgsDecoder(reflect.TypeFor[largeEchoArgs]())
	run("Pipeline", func() error {
		m, err := jsonrpc.Decode(msg)
		if err != nil {
			return err
		}
		var p CallToolRequestParams
		if err := decodeCallToolParams(m.(*jsonrpc.Request).Params, &p); err != nil {
			return err
		}
		if err := schema.ValidateJSON(p.Arguments); err != nil {
			return err
		}
		var in largeEchoArgs
		if !dec.decode(p.Arguments, reflect.ValueOf(&in).Elem()) {
			return errors.New("fast decoder refused")
		}
		res := &CallToolResult{Content: []Content{&TextContent{Text: in.Text}}}
		out, err := res.AppendJSON(nil)
		if err != nil {
			return err
		}
		buf, err = jsonrpc.AppendMessage(buf[:0], &jsonrpc.Response{ID: jsonrpc.Int64ID(1), Result: out})
		return err
	})
	run("Decode", func() error { _, err := jsonrpc.Decode(msg); return err })
	run("parseParams", func() error { var p CallToolRequestParams; return parseParams(params, &p) })
	run("decodeCallToolParams", func() error { var p CallToolRequestParams; return decodeCallToolParams(params, &p) })
	run("ValidateJSON", func() error { return schema.ValidateJSON(p.Arguments) })
	run("UnmarshalArgs", func() error { var a largeEchoArgs; return json.Unmarshal(p.Arguments, &a) })
	run("argsDecoder", func() error {
		var a largeEchoArgs
		if !dec.decode(p.Arguments, reflect.ValueOf(&a).Elem()) {
			return errors.New("fast decoder refused")
		}
		return nil
	})
	run("MarshalResult", func() error { _, err := json.Marshal(result); return err })
	run("AppendJSONResult", func() error { _, err := result.AppendJSON(nil); return err })
	run("AppendMessage", func() error { _, err := jsonrpc.AppendMessage(buf[:0], resp); return err })
}
