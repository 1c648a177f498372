package mcp

import (
	"cmp"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// buildEraServer builds testdata/eraserver into a directory of t's.
func buildEraServer(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to build testdata/eraserver: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "eraserver")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/eraserver").CombinedOutput(); err != nil {
		t.Fatalf("building testdata/eraserver: %v\n%s", err, out)
	}
	return bin
}

// requestsByProcess reads an eraserver log: the methods each process
// received, by pid.
func requestsByProcess(t *testing.T, path string) map[int][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	m := map[int][]string{}
	for line := range strings.Lines(string(b)) {
		pid, method, ok := strings.Cut(strings.TrimSpace(line), " ")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil {
			t.Fatalf("log line %q", line)
		}
		m[n] = append(m[n], method)
	}
	return m
}

// TestProbeSiblingProcess checks EraPolicyProbeSibling against real
// processes: the probe goes to a throwaway process of the same command,
// so a legacy server that exits on a request before initialize is not
// lost, and the real process never sees server/discover; a modern answer
// makes the session modern without a request on the real connection.
// The in-band probe (EraPolicyAuto) against the same fragile server is
// the contrast: it kills the connection.
func TestProbeSiblingProcess(t *testing.T) {
	bin := buildEraServer(t)
	tests := []struct {
		name        string
		mode        string
		policy      EraPolicy
		wantErr     error
		era         Era
		realSees    []string // what the real process receives
		siblingSees []string // what the probe processes receive, together; nil: no probe process
		probeWait   time.Duration
	}{
		{name: "fragile legacy", mode: "fragile", policy: EraPolicyProbeSibling, era: EraLegacy,
			realSees: []string{MethodInitialize, NotificationInitialized, MethodToolsList}, siblingSees: []string{MethodServerDiscover}},
		{name: "silent legacy", mode: "silent", policy: EraPolicyProbeSibling, era: EraLegacy, probeWait: 300 * time.Millisecond,
			realSees: []string{MethodInitialize, NotificationInitialized, MethodToolsList}, siblingSees: []string{MethodServerDiscover}},
		{name: "modern", mode: "modern", policy: EraPolicyProbeSibling, era: EraModern,
			realSees: []string{MethodToolsList}, siblingSees: []string{MethodServerDiscover}},
		{name: "default sends no probe", mode: "fragile", policy: EraPolicyDefault, era: EraLegacy,
			realSees: []string{MethodInitialize, NotificationInitialized, MethodToolsList}},
		{name: "in-band probe kills a fragile server", mode: "fragile", policy: EraPolicyAuto, wantErr: ErrProbeKilledServer,
			realSees: []string{MethodServerDiscover}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			logPath := filepath.Join(t.TempDir(), "requests")
			ct := &CommandTransport{Command: exec.Command(bin, tt.mode, logPath), TerminateTimeout: time.Second}
			// A generous probe timeout where an answer (or an exit) is due:
			// a slow machine must not turn a modern server into a legacy one.
			probeWait := cmp.Or(tt.probeWait, 10*time.Second)
			c := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{EraPolicy: tt.policy, ProbeTimeout: probeWait})
			cs, err := c.Connect(ctx, ct)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Connect: %v, want %v", err, tt.wantErr)
			}
			if err == nil {
				if cs.Era() != tt.era {
					t.Errorf("era %v, want %v", cs.Era(), tt.era)
				}
				if got := cs.DiscoverResult() != nil; got != (tt.era == EraModern) {
					t.Errorf("DiscoverResult() set: %v, want %v", got, tt.era == EraModern)
				}
				if _, err := cs.ListTools(ctx, nil); err != nil {
					t.Errorf("ListTools on the real connection: %v", err)
				}
				cs.Close()
			}
			real := ct.Command.Process.Pid
			byPid := requestsByProcess(t, logPath)
			if got := byPid[real]; !slices.Equal(got, tt.realSees) {
				t.Errorf("the real process received %v, want %v", got, tt.realSees)
			}
			var sibling []string
			for pid, ms := range byPid {
				if pid != real {
					sibling = append(sibling, ms...)
				}
			}
			if !slices.Equal(sibling, tt.siblingSees) {
				t.Errorf("probe processes received %v, want %v", sibling, tt.siblingSees)
			}
		})
	}
}

// TestProbeSiblingNotACommand checks that EraPolicyProbeSibling on a
// transport that starts no process sends no probe (stdio-like streams:
// legacy, as EraPolicyDefault).
func TestProbeSiblingNotACommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ct, st := InMemoryTransports()
	ss, err := st.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go fragileLegacyServer(ctx, ss)
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, &ClientOptions{EraPolicy: EraPolicyProbeSibling}).Connect(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.Era() != EraLegacy {
		t.Errorf("era %v", cs.Era())
	}
}
