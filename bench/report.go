package main

import (
	"fmt"
	"io"
	"runtime"
)

// printMarkdown writes the results as markdown tables followed by ratios.
func printMarkdown(w io.Writer, cfg config, res []*result) {
	fmt.Fprintf(w, "%s, %s/%s, %s; medians of %d interleaved repeats, %d requests per level; %s client\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, layout(cfg), cfg.Repeats, cfg.Requests, cfg.Client)
	fmt.Fprint(w, "| server |")
	for _, c := range cfg.Levels {
		fmt.Fprintf(w, " C=%d req/s | C=%d p50/p99 µs |", c, c)
	}
	fmt.Fprint(w, "\n|---|")
	for range cfg.Levels {
		fmt.Fprint(w, "---:|---:|")
	}
	fmt.Fprintln(w)
	for _, r := range res {
		fmt.Fprintf(w, "| %s |", r.Name)
		for _, c := range cfg.Levels {
			l := r.Calls[c]
			fmt.Fprintf(w, " %.0f | %.0f / %.0f |", l.RPS, l.P50us, l.P99us)
		}
		fmt.Fprintln(w)
	}
	bare := res[len(res)-1] // impls() lists the bare handler last
	c := cfg.Levels[0]
	for _, l := range cfg.Levels {
		if l == 16 {
			c = l
		}
	}
	b := bare.Calls[c]
	whose := "the servers' process"
	if cfg.Mode == "shared" {
		whose = "whole process, client included"
	}
	fmt.Fprintf(w, "\nPer tools/call at C=%d (%s, then minus the bare handler's figure = the server's own cost); handshakes; 1 MiB echo; idle sessions\n\n", c, whose)
	fmt.Fprintln(w, "| server | allocs/req | −bare | bytes/req | −bare | CPU µs/req | −bare | handler allocs/req | handler bytes/req | initialize handshakes/s | 1 MiB echo p50 ms | idle session heap+stack bytes | −bare | idle session RSS bytes | −bare |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range res {
		l := r.Calls[c]
		// "—" where nothing was measured: skipped by its flag, or, for a
		// 2026-07-28 row, no initialize and no session to measure.
		hs := fmt.Sprintf("%.0f", r.HandshakesPS)
		if r.Modern || cfg.Handshakes == 0 {
			hs = "—"
		}
		idle := fmt.Sprintf("%.0f | %.0f | %.0f | %.0f", r.IdleBytes, r.IdleBytes-bare.IdleBytes, r.IdleRSS, r.IdleRSS-bare.IdleRSS)
		if r.Modern || cfg.Idle == 0 {
			idle = "— | — | — | —"
		}
		mib := fmt.Sprintf("%.2f", r.MiBEchoP50ms)
		if cfg.BigCalls == 0 {
			mib = "—"
		}
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.0f | %.0f | %.1f | %.1f | %.1f | %.0f | %s | %s | %s |\n", r.Name,
			l.Allocs, l.Allocs-b.Allocs, l.Bytes, l.Bytes-b.Bytes, l.CPUus, l.CPUus-b.CPUus, r.HandlerAllocs, r.HandlerBytes,
			hs, mib, idle)
	}
	ours := res[0]
	fmt.Fprintf(w, "\nRatios of tools/call req/s, %s over each:\n\n", ours.Name)
	fmt.Fprint(w, "| over |")
	for _, c := range cfg.Levels {
		fmt.Fprintf(w, " C=%d |", c)
	}
	fmt.Fprint(w, "\n|---|")
	for range cfg.Levels {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, r := range res[1:] {
		fmt.Fprintf(w, "| %s |", r.Name)
		for _, c := range cfg.Levels {
			fmt.Fprintf(w, " %.2f× |", ours.Calls[c].RPS/r.Calls[c].RPS)
		}
		fmt.Fprintln(w)
	}
	printModern(w, c, res)
}

// layout describes where the servers and the client ran.
func layout(cfg config) string {
	if cfg.Mode == "shared" {
		return fmt.Sprintf("servers and client in one process, GOMAXPROCS=%d", cfg.ServerProcs)
	}
	if len(cfg.ServerCPUs) == 0 {
		return fmt.Sprintf("servers in a child process (GOMAXPROCS=%d), client in another (GOMAXPROCS=%d), not pinned", cfg.ServerProcs, cfg.ClientProcs)
	}
	return fmt.Sprintf("servers in a child process pinned to CPU %s (GOMAXPROCS=%d), client pinned to CPU %s (GOMAXPROCS=%d)",
		formatCPUs(cfg.ServerCPUs), cfg.ServerProcs, formatCPUs(cfg.ClientCPUs), cfg.ClientProcs)
}

// redisBound is issue 21's bound on the cost of shared state: a replica
// on Redis keeps at least this share of one in memory's tools/call
// throughput at C=16.
const redisBound = 0.85

// redisPairs are the rows on Redis and the in-memory row each is held
// against; bounded marks those held against redisBound (one replica
// against one in memory, in the same answer mode). mcpstack×3+redis
// (plain round robin over replicas sharing their sessions) against
// mcpstack×3 (the same proxy, sticky, over in-memory replicas) is the
// cost of sharing with the proxy's hop on both sides; against mcpstack,
// it is the hop and the sharing together.
var redisPairs = []struct {
	row, base string
	bounded   bool
}{
	{"mcpstack+redis", "mcpstack", true},
	{"mcpstack+sse+redis", "mcpstack+sse", true},
	{"mcpstack×3+redis", "mcpstack×3", false},
	{"mcpstack×3+redis", "mcpstack", false},
}

// printRedis writes, at each concurrency level, the rows on Redis against
// their in-memory baselines (the bound applies at C=16, issue 21's
// level), and the notification latency across replicas; nothing when no
// row on Redis ran and no latency was measured.
func printRedis(w io.Writer, cfg config, res []*result, notify *notifyResults) {
	byName := map[string]*result{}
	for _, r := range res {
		byName[r.Name] = r
	}
	for _, c := range cfg.Levels {
		var lines []string
		for _, pr := range redisPairs {
			r, b := byName[pr.row], byName[pr.base]
			if r == nil || b == nil {
				continue
			}
			lines = append(lines, redisLine(pr.row, pr.base, r.Calls[c], b.Calls[c], pr.bounded && c == 16))
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nShared state on Redis (issue 21), tools/call at C=%d:\n\n", c)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
	if notify != nil {
		fmt.Fprintf(w, "\nA resource change crossing replicas on Redis (issue 21), one change at a time:\n\n")
		fmt.Fprintf(w, "- end to end (published on replica A, read by a client on the GET stream it holds through replica B, in its handler), %d changes: p50 %.0f µs, p99 %.0f µs, max %.0f µs\n",
			notify.EndToEnd.Changes, notify.EndToEnd.P50us, notify.EndToEnd.P99us, notify.EndToEnd.MaxUs)
		fmt.Fprintf(w, "- on the bus alone (the subscriber's session on the other replica over an in-memory transport), %d changes: p50 %.0f µs, p99 %.0f µs, max %.0f µs\n",
			notify.Bus.Changes, notify.Bus.P50us, notify.Bus.P99us, notify.Bus.MaxUs)
	}
}

// redisLine is one comparison of printRedis: row over base, held against
// redisBound if bounded.
func redisLine(row, base string, rl, bl level, bounded bool) string {
	ratio := rl.RPS / bl.RPS
	line := fmt.Sprintf("- %s over %s: %.2f× req/s (%.0f / %.0f), server CPU %.1f / %.1f µs/req, allocs %.1f / %.1f per req",
		row, base, ratio, rl.RPS, bl.RPS, rl.CPUus, bl.CPUus, rl.Allocs, bl.Allocs)
	if bounded {
		verdict := "not met"
		if ratio >= redisBound {
			verdict = "met"
		}
		line += fmt.Sprintf("; target ≥ %.2f× (shared state costs at most %.0f%% of throughput): %s", redisBound, (1-redisBound)*100, verdict)
	}
	return line
}
