package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcpstack/mcpstack/mcp"
)

// The stdio rows (issue 18, item 4): each server runs in a child process
// of its own (this program again, with stdioEnv naming the server) that
// serves the echo tool on its standard input and output, as an MCP host
// runs a stdio server; the parent writes tools/call lines to the child's
// stdin and reads the answers from its stdout, with no client library, in
// a closed loop and with a window of messages in flight. The bare row is
// a line echo through the same pipes: the floor of moving a line there
// and back.

// stdioEnv names the server that a stdio child serves; stdioCPUsEnv lists
// the CPUs it pins itself to.
const (
	stdioEnv     = "MCPSTACK_BENCH_STDIO"
	stdioCPUsEnv = "MCPSTACK_BENCH_STDIO_CPUS"
	// stdioProfileEnv, if set in the parent's environment, makes each
	// stdio child write a CPU profile to its value + "." + server +
	// ".pprof", to see where a server's CPU per message goes.
	stdioProfileEnv = "MCPSTACK_BENCH_STDIO_PROFILE"
)

// stdioImpls are the servers of the stdio rows; the bare line echo is
// last, as impls lists the bare handler.
var stdioImpls = []string{"mcpstack", "mcp-go", "go-sdk", "bare"}

// stdioLevel is the outcome of one batch of tools/call lines with a given
// number in flight.
type stdioLevel struct {
	MsgPS float64 `json:"msg_per_s"`
	P50us float64 `json:"p50_us"`
	P99us float64 `json:"p99_us"`
	// CPUus is the child's CPU time per message (all its threads).
	CPUus float64 `json:"server_cpu_us_per_msg"`
}

// stdioResult holds one server's medians over the repeats.
type stdioResult struct {
	Name   string             `json:"name"`
	Levels map[int]stdioLevel `json:"tools_call"`
	raw    map[int][]stdioLevel
}

// serveStdio is a stdio child's whole life: pin itself as stdioCPUsEnv
// says, then serve name on standard input and output until stdin ends.
func serveStdio(name string) error {
	cpus, err := parseCPUs(os.Getenv(stdioCPUsEnv))
	if err != nil {
		return err
	}
	if len(cpus) > 0 {
		if err := pinProcess(cpus); err != nil {
			return err
		}
		runtime.GOMAXPROCS(len(cpus))
	}
	if prefix := os.Getenv(stdioProfileEnv); prefix != "" {
		f, err := os.Create(prefix + "." + name + ".pprof")
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	ctx := context.Background()
	switch name {
	case "mcpstack":
		return oursServer(nil).Run(ctx, &mcp.StdioTransport{})
	case "go-sdk":
		return goSDKServer().Run(ctx, &gosdk.StdioTransport{})
	case "mcp-go":
		err := mcpgoserver.NewStdioServer(mcpGoServer()).Listen(ctx, os.Stdin, os.Stdout)
		if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	case "bare":
		return lineEcho(os.Stdin, os.Stdout)
	}
	return fmt.Errorf("no stdio server %q", name)
}

// lineEcho writes every line it reads back, one write per line, as a
// server that answers each message at once would.
func lineEcho(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := out.Write(line); werr != nil {
				return werr
			}
		}
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, bufio.ErrBufferFull): // a long line: the rest follows
		case err != nil:
			return err
		}
	}
}

// stdioTarget is one stdio child, started once for the run.
type stdioTarget struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	nextID int64
}

// startStdio starts the child serving name, pinned to cpus (if any), and
// initializes its session.
func startStdio(name string, cpus []int) (*stdioTarget, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$") // the flag keeps a test binary quiet
	if !strings.HasSuffix(exe, ".test") {
		cmd = exec.Command(exe)
	}
	cmd.Env = append(os.Environ(), stdioEnv+"="+name, stdioCPUsEnv+"="+formatCPUs(cpus))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &stdioTarget{name: name, cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 64<<10)}
	if name != "bare" {
		if err := t.initialize(); err != nil {
			t.close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return t, nil
}

// initialize opens the MCP session: initialize, its answer, initialized.
func (t *stdioTarget) initialize() error {
	if _, err := io.WriteString(t.stdin, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`+"\n"); err != nil {
		return err
	}
	ans, err := t.out.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if !bytes.Contains(ans, []byte(`"result":`)) {
		return fmt.Errorf("initialize answered %.300s", ans)
	}
	_, err = io.WriteString(t.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return err
}

func (t *stdioTarget) close() {
	t.stdin.Close()
	t.cmd.Wait()
}

// callLine appends a tools/call line of the echo tool with id.
func callLine(b []byte, id int64) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`+"\n"...)
}

// answerID returns the id of an answer line (its first "id" member, which
// every server here writes before the result), or -1.
func answerID(line []byte) int64 {
	i := bytes.Index(line, []byte(`"id":`))
	if i < 0 {
		return -1
	}
	rest := line[i+len(`"id":`):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	id, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil {
		return -1
	}
	return id
}

// calls sends n tools/call lines, keeping inflight of them outstanding,
// and measures the rate, the latency of each (from its write to its
// answer) and the child's CPU time per message.
func (t *stdioTarget) calls(n, inflight int) (stdioLevel, error) {
	base := t.nextID + 1
	t.nextID += int64(n)
	sent := make([]time.Time, n)
	lat := make([]time.Duration, 0, n)
	window := make(chan struct{}, inflight)
	werr := make(chan error, 1)
	cpu0 := childCPU(t.cmd.Process.Pid)
	start := time.Now()
	write := func(i int, buf []byte) ([]byte, error) {
		buf = callLine(buf[:0], base+int64(i))
		sent[i] = time.Now()
		_, err := t.stdin.Write(buf)
		return buf, err
	}
	if inflight > 1 {
		go func() {
			buf := make([]byte, 0, 128)
			var err error
			for i := range n {
				window <- struct{}{}
				if buf, err = write(i, buf); err != nil {
					break
				}
			}
			werr <- err
		}()
	}
	buf := make([]byte, 0, 128)
	for i := range n {
		if inflight <= 1 {
			var err error
			if buf, err = write(i, buf); err != nil {
				return stdioLevel{}, err
			}
		}
		ans, err := t.out.ReadSlice('\n')
		if err != nil {
			return stdioLevel{}, fmt.Errorf("%s: read: %w", t.name, err)
		}
		now := time.Now()
		if t.name != "bare" && !bytes.Contains(ans, []byte(`"result":`)) {
			return stdioLevel{}, fmt.Errorf("%s: answer %.300s", t.name, ans)
		}
		k := answerID(ans) - base
		if k < 0 || k >= int64(n) {
			return stdioLevel{}, fmt.Errorf("%s: answer to an unknown id: %.300s", t.name, ans)
		}
		lat = append(lat, now.Sub(sent[k]))
		if inflight > 1 {
			<-window
		}
	}
	elapsed := time.Since(start)
	cpu1 := childCPU(t.cmd.Process.Pid)
	if inflight > 1 {
		if err := <-werr; err != nil {
			return stdioLevel{}, err
		}
	}
	slices.Sort(lat)
	lv := stdioLevel{
		MsgPS: float64(n) / elapsed.Seconds(),
		P50us: us(lat[len(lat)/2]),
		P99us: us(lat[len(lat)*99/100]),
		CPUus: -1,
	}
	if cpu0 >= 0 && cpu1 >= 0 {
		lv.CPUus = float64(cpu1-cpu0) / 1e3 / float64(n)
	}
	return lv, nil
}

// childCPU returns the CPU time of process pid so far in nanoseconds, the
// sum over its threads of /proc/PID/task/TID/schedstat's first field (a
// nanosecond count, unlike getrusage's for a running child), or -1 where
// that cannot be read.
func childCPU(pid int) int64 {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
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

// runStdio measures the stdio rows: every server at every level of
// cfg.StdioLevels, cfg.Repeats times, interleaved as run does.
func runStdio(cfg config, log io.Writer) ([]*stdioResult, error) {
	var ts []*stdioTarget
	defer func() {
		for _, t := range ts {
			t.close()
		}
	}()
	maxC := slices.Max(cfg.StdioLevels)
	for _, name := range stdioImpls {
		t, err := startStdio(name, cfg.ServerCPUs)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
		if _, err := t.calls(200, maxC); err != nil { // warm up
			return nil, err
		}
	}
	res := make([]*stdioResult, len(ts))
	for i, t := range ts {
		res[i] = &stdioResult{Name: t.name, Levels: map[int]stdioLevel{}, raw: map[int][]stdioLevel{}}
	}
	for rep := range cfg.Repeats {
		for _, c := range cfg.StdioLevels {
			for k := range ts {
				i := (k + rep) % len(ts) // rotate who goes first
				fmt.Fprintf(log, "repeat %d: stdio tools/call in flight=%d %s\n", rep+1, c, ts[i].name)
				lv, err := ts[i].calls(cfg.Stdio, c)
				if err != nil {
					return nil, err
				}
				res[i].raw[c] = append(res[i].raw[c], lv)
			}
		}
	}
	for _, r := range res {
		for c, lvs := range r.raw {
			r.Levels[c] = stdioLevel{
				MsgPS: median(lvs, func(l stdioLevel) float64 { return l.MsgPS }),
				P50us: median(lvs, func(l stdioLevel) float64 { return l.P50us }),
				P99us: median(lvs, func(l stdioLevel) float64 { return l.P99us }),
				CPUus: median(lvs, func(l stdioLevel) float64 { return l.CPUus }),
			}
		}
	}
	return res, nil
}

// printStdio writes the stdio rows as a markdown table, the ratios to the
// bare line echo, and issue 18's targets.
func printStdio(w io.Writer, cfg config, res []*stdioResult) {
	fmt.Fprintf(w, "\nstdio tools/call, one child process per server (%s); medians of %d interleaved repeats, %d messages per level\n\n",
		stdioLayout(cfg), cfg.Repeats, cfg.Stdio)
	fmt.Fprint(w, "| server |")
	for _, c := range cfg.StdioLevels {
		fmt.Fprintf(w, " %d in flight msg/s | p50/p99 µs | server CPU µs/msg |", c)
	}
	fmt.Fprint(w, "\n|---|")
	for range cfg.StdioLevels {
		fmt.Fprint(w, "---:|---:|---:|")
	}
	fmt.Fprintln(w)
	for _, r := range res {
		fmt.Fprintf(w, "| %s |", r.Name)
		for _, c := range cfg.StdioLevels {
			l := r.Levels[c]
			fmt.Fprintf(w, " %.0f | %.0f / %.0f | %.1f |", l.MsgPS, l.P50us, l.P99us, l.CPUus)
		}
		fmt.Fprintln(w)
	}
	bare := res[len(res)-1]
	fmt.Fprintf(w, "\nRatios to the bare line echo (msg/s, and p50 latency as bare's over the server's):\n\n| server |")
	for _, c := range cfg.StdioLevels {
		fmt.Fprintf(w, " %d in flight msg/s | %d in flight p50 |", c, c)
	}
	fmt.Fprint(w, "\n|---|")
	for range cfg.StdioLevels {
		fmt.Fprint(w, "---:|---:|")
	}
	fmt.Fprintln(w)
	for _, r := range res[:len(res)-1] {
		fmt.Fprintf(w, "| %s |", r.Name)
		for _, c := range cfg.StdioLevels {
			fmt.Fprintf(w, " %.2f× | %.2f× |", r.Levels[c].MsgPS/bare.Levels[c].MsgPS, bare.Levels[c].P50us/r.Levels[c].P50us)
		}
		fmt.Fprintln(w)
	}
	ours := res[0]
	if l1, ok := ours.Levels[1]; ok {
		ratio := l1.MsgPS / bare.Levels[1].MsgPS
		fmt.Fprintf(w, "\nTarget: closed loop ≥ 0.5× the bare echo: %s %.2f× (%s)\n", ours.Name, ratio, met(ratio >= 0.5))
	}
	if l32, ok := ours.Levels[32]; ok {
		fmt.Fprintf(w, "Target: ≤ 8 µs of server CPU per message with 32 in flight: %s %.1f µs (%s)\n", ours.Name, l32.CPUus, met(l32.CPUus <= 8))
	}
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// stdioLayout describes where the stdio children and the client ran.
func stdioLayout(cfg config) string {
	if len(cfg.ServerCPUs) == 0 {
		return "not pinned"
	}
	return fmt.Sprintf("each child pinned to CPU %s, client to CPU %s", formatCPUs(cfg.ServerCPUs), formatCPUs(cfg.ClientCPUs))
}
