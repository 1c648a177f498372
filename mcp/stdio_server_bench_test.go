package mcp

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The benchmarks below price the server side of stdio alone (issue 18,
// item 4): a raw client writes tools/call lines of the child server's echo
// tool and reads the answers, with no client Conn, in a closed loop and
// with 32 requests in flight, beside the same loops through a bare line
// echo. Each reports server-µs/op, the child's CPU time per message read
// from /proc (Linux; not reported elsewhere).

// BenchmarkStdioServerCallTool is a closed loop of tools/call lines.
func BenchmarkStdioServerCallTool(b *testing.B) { benchStdioRaw(b, "server", 1) }

// BenchmarkStdioServerCallTool32 keeps 32 tools/call lines in flight.
func BenchmarkStdioServerCallTool32(b *testing.B) { benchStdioRaw(b, "server", 32) }

// BenchmarkStdioServerBareEcho is the closed loop through a bare line echo.
func BenchmarkStdioServerBareEcho(b *testing.B) { benchStdioRaw(b, "echo", 1) }

// BenchmarkStdioServerBareEcho32 keeps 32 lines in flight through a bare
// line echo.
func BenchmarkStdioServerBareEcho32(b *testing.B) { benchStdioRaw(b, "echo", 32) }

// benchStdioRaw drives a child in mode with inflight lines outstanding.
func benchStdioRaw(b *testing.B, mode string, inflight int) {
	cmd := childCommand(b, mode)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReader(stdout)
	if mode == "server" {
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	var id int64
	line := func(buf []byte) []byte {
		id++
		buf = append(buf, `{"jsonrpc":"2.0","id":`...)
		buf = strconv.AppendInt(buf, id, 10)
		return append(buf, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`+"\n"...)
	}
	check := func(ans []byte) {
		if mode == "server" && !bytes.Contains(ans, []byte(`"result":`)) {
			b.Fatalf("answer %s", ans)
		}
	}
	buf := make([]byte, 0, 128)
	// Fill the window, then write one line per answer read.
	for range inflight - 1 {
		buf = line(buf[:0])
		if _, err := stdin.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	cpu0 := childCPU(cmd)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		buf = line(buf[:0])
		if _, err := stdin.Write(buf); err != nil {
			b.Fatal(err)
		}
		ans, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		check(ans)
	}
	b.StopTimer()
	if cpu1 := childCPU(cmd); cpu0 >= 0 && cpu1 >= 0 && n > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/1e3/float64(n), "server-µs/op")
	}
	for range inflight - 1 {
		if _, err := r.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}

// childCPU returns the CPU time of cmd's process so far in nanoseconds, the
// sum over its threads of /proc/PID/task/TID/schedstat's first field, or
// -1 where that cannot be read.
func childCPU(cmd *exec.Cmd) int64 {
	dir := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread has exited
		}
		f := bytes.Fields(data)
		if len(f) == 0 {
			return -1
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return -1
		}
		sum += ns
	}
	return sum
}
