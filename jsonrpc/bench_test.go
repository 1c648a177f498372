package jsonrpc

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

var (
	benchCallRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York","units":"metric"},"_meta":{"progressToken":"tok-42"}}}`)
	benchCallResult  = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Current weather in New York: Temperature 22C, partly cloudy, humidity 65%, wind 10 km/h NW."}],"isError":false}}`)
)

func BenchmarkDecodeToolsCallRequest(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchCallRequest)))
	for b.Loop() {
		if _, err := Decode(benchCallRequest); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeToolsCallResult(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchCallResult)))
	for b.Loop() {
		if _, err := Decode(benchCallResult); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeToolsCallRequest(b *testing.B) {
	m, _ := Decode(benchCallRequest)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendMessage(buf[:0], m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeToolsCallResult(b *testing.B) {
	m, _ := Decode(benchCallResult)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendMessage(buf[:0], m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdlibUnmarshalRequest is a yardstick: encoding/json decoding
// the same request into a generic envelope (less strict than Decode).
func BenchmarkStdlibUnmarshalRequest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(benchCallRequest, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConnRoundTrip measures a call through two Conns joined by an
// in-memory pipe.
func BenchmarkConnRoundTrip(b *testing.B) {
	x, y := NewPipe()
	server := NewConn(y, ConnOptions{Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		return json.RawMessage(`{}`), nil
	})})
	client := NewConn(x, ConnOptions{})
	defer server.Close()
	defer client.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := client.Call(ctx, "ping", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConnCallOSPipe measures a call between two Conns joined by OS
// pipes, as a stdio client and server are, the server answering inline. A
// call reads its own response, whether its context can end or not: the
// pipes' reads can be given up when it ends (see interruptibleStream).
func BenchmarkConnCallOSPipe(b *testing.B) {
	for _, tt := range []struct {
		name   string
		cancel bool
	}{{"mayRead", false}, {"cancellable", true}} {
		b.Run(tt.name, func(b *testing.B) {
			ar, bw, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			br, aw, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			server := NewConn(NewLineStream(br, bw, pipeCloser{br, bw}, 0), ConnOptions{
				Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) { return json.RawMessage(`{}`), nil }),
				Inline:  func(string) bool { return true },
			})
			client := NewConn(NewLineStream(ar, aw, pipeCloser{ar, aw}, 0), ConnOptions{})
			defer server.Close()
			defer client.Close()
			ctx := context.Background()
			if tt.cancel {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := client.CallRaw(ctx, "ping", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
