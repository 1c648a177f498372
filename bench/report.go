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

// printRedis writes the rows on Redis against the in-memory row at C=16
// (the level nearest to it when 16 is not measured), against the bound,
// and the notification latency across replicas; nothing when no row on
// Redis ran.
func printRedis(w io.Writer, cfg config, res []*result, notify *notifyResult) {
	byName := map[string]*result{}
	for _, r := range res {
		byName[r.Name] = r
	}
	mem, one, three := byName["mcpstack"], byName["mcpstack+redis"], byName["mcpstack×3+redis"]
	if one == nil && three == nil && notify == nil {
		return
	}
	c := cfg.Levels[0]
	for _, l := range cfg.Levels {
		if l == 16 {
			c = l
		}
	}
	fmt.Fprintf(w, "\nShared state on Redis (issue 21), tools/call at C=%d:\n\n", c)
	if mem != nil {
		for _, r := range []*result{one, three} {
			if r == nil {
				continue
			}
			ratio := r.Calls[c].RPS / mem.Calls[c].RPS
			verdict := "not met"
			if ratio >= redisBound {
				verdict = "met"
			}
			fmt.Fprintf(w, "- %s over mcpstack (in memory): %.2f× req/s (%.0f / %.0f), CPU %.1f / %.1f µs/req, allocs %.1f / %.1f per req", r.Name,
				ratio, r.Calls[c].RPS, mem.Calls[c].RPS, r.Calls[c].CPUus, mem.Calls[c].CPUus, r.Calls[c].Allocs, mem.Calls[c].Allocs)
			if r == one {
				fmt.Fprintf(w, "; target ≥ %.2f× (at most %.0f%% of throughput): %s", redisBound, (1-redisBound)*100, verdict)
			}
			fmt.Fprintln(w)
		}
	} else {
		fmt.Fprintln(w, "- no ratio: the in-memory mcpstack row did not run (-only)")
	}
	if notify != nil {
		fmt.Fprintf(w, "- a resource change crossing replicas (published on one, heard by a subscriber on another), %d changes: p50 %.0f µs, p99 %.0f µs, max %.0f µs\n",
			notify.Changes, notify.P50us, notify.P99us, notify.MaxUs)
	}
}
