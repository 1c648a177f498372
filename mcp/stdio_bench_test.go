package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkStdioPingCancellable is BenchmarkStdioPing with a context that
// can end, as real clients use. The child's standard output is a pipe
// whose reads can be given up when the context ends (read deadlines), so
// such a call reads its own response too, with no hand-off between
// goroutines: compare it with BenchmarkStdioPing (within 1.15x) by running
// the test binary several times with -test.bench
// 'StdioPing$|StdioPingCancellable' and taking the median of the ratios.
func BenchmarkStdioPingCancellable(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchStdioPing(b, ctx, nil)
}

// BenchmarkStdioPingTimeout is BenchmarkStdioPingCancellable with a client
// RequestTimeout, as real clients set: each call has a context of its own,
// with a timer, and reads its own response all the same.
func BenchmarkStdioPingTimeout(b *testing.B) {
	benchStdioPing(b, context.Background(), &ClientOptions{RequestTimeout: time.Minute})
}

// BenchmarkStdioPingRawClient measures the server side alone: the same
// child server, driven by raw line writes and reads with no client Conn.
func BenchmarkStdioPingRawClient(b *testing.B) {
	cmd := childCommand(b, "server")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReader(stdout)
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}` + "\n"))
	r.ReadSlice('\n')
	var id int64
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		id++
		buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
		buf = appendInt(buf, id)
		buf = append(buf, `,"method":"ping"}`+"\n"...)
		if _, err := stdin.Write(buf); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

func appendInt(b []byte, n int64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// BenchmarkStdioBareEchoHandoff is BenchmarkStdioBareEcho with the reading
// done by a second goroutine that hands each line to the caller over a
// channel, as a connection's read loop did before callers read their own
// responses (see jsonrpc.Conn's read token): it prices that hand-off.
func BenchmarkStdioBareEchoHandoff(b *testing.B) {
	cmd := childCommand(b, "echo")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	lines := make(chan struct{}, 1)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			if _, err := r.ReadSlice('\n'); err != nil {
				close(lines)
				return
			}
			lines <- struct{}{}
		}
	}()
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, ok := <-lines; !ok {
			b.Fatal("echo ended")
		}
	}
}

// BenchmarkStdioCallTool is a tools/call of the child server's echo tool,
// which the server handles on a goroutine of its own (ping is answered on
// its read loop): beside BenchmarkStdioPing it prices that server-side
// hand-off.
func BenchmarkStdioCallTool(b *testing.B) {
	ctx := context.Background()
	client := NewClient(&Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &CommandTransport{Command: childCommand(b, "server")})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	p := &CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
