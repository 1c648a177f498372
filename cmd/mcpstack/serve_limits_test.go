package main

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
)

// TestListenBytesFlag checks --max-listen-bytes and
// --max-listeners-per-caller: their defaults are the library's, 0 turns
// a bound off (the option's -1), and a negative value is a usage error.
func TestListenBytesFlag(t *testing.T) {
	tests := []struct {
		args      []string
		want      int64
		perCaller int // 0: not checked
		bad       bool
	}{
		{nil, mcp.DefaultMaxListenBytes, mcp.DefaultMaxListenersPerPrincipal, false},
		{[]string{"--max-listen-bytes", "4096"}, 4096, 0, false},
		{[]string{"--max-listen-bytes", "0"}, -1, 0, false},
		{[]string{"--max-listen-bytes", "-5"}, 0, 0, true},
		{[]string{"--max-listeners-per-caller", "3"}, mcp.DefaultMaxListenBytes, 3, false},
		{[]string{"--max-listeners-per-caller", "0"}, mcp.DefaultMaxListenBytes, -1, false},
		{[]string{"--max-listeners-per-caller", "-1"}, 0, 0, true},
		{[]string{"--max-modern-requests-per-caller", "-1"}, 0, 0, true},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		l := addStreamLimitFlags(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if err := l.check(); (err != nil) != tt.bad {
			t.Errorf("%v: check %v", tt.args, err)
			continue
		}
		if tt.bad {
			continue
		}
		var o mcp.ServerOptions
		l.server(&o)
		if o.MaxListenBytes != tt.want {
			t.Errorf("%v: MaxListenBytes %d, want %d", tt.args, o.MaxListenBytes, tt.want)
		}
		if len(tt.args) == 0 && o.MaxModernRequestsPerPrincipal != mcp.DefaultMaxModernRequestsPerPrincipal {
			t.Errorf("MaxModernRequestsPerPrincipal %d by default", o.MaxModernRequestsPerPrincipal)
		}
		if tt.perCaller != 0 && o.MaxListenersPerPrincipal != tt.perCaller {
			t.Errorf("%v: MaxListenersPerPrincipal %d, want %d", tt.args, o.MaxListenersPerPrincipal, tt.perCaller)
		}
	}
}

// TestClientWatchEndsWithTheListenStream checks that client watch against
// a modern server whose subscriptions/listen stream ends (the server shuts
// down, and answers the listen with its result) exits with an error
// saying so, instead of watching nothing for ever, as it did.
func TestClientWatchEndsWithTheListenStream(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{ListChanged: true}},
	})
	h := mcphttp.NewHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	acked := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == mcp.MethodSubscriptionsListen {
			w = &ackSpy{ResponseWriter: w, acked: func() { once.Do(func() { close(acked) }) }}
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	res := make(chan result, 1)
	go func() { res <- runCmd(t, "", "client", ts.URL, "watch") }()
	select {
	case <-acked:
	case r := <-res:
		t.Fatalf("watch ended before listening: %d %s", r.code, r.stderr)
	}
	h.Close() // the listen stream ends with its result
	r := <-res
	if r.code == exitOK || !strings.Contains(r.stderr, "ended the subscriptions/listen stream") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// ackSpy tells when the listen stream's acknowledgement goes out.
type ackSpy struct {
	http.ResponseWriter
	acked func()
}

func (a *ackSpy) Write(b []byte) (int, error) {
	n, err := a.ResponseWriter.Write(b)
	if strings.Contains(string(b), mcp.NotificationSubscriptionsAcknowledged) {
		a.acked()
	}
	return n, err
}

func (a *ackSpy) Unwrap() http.ResponseWriter { return a.ResponseWriter }
