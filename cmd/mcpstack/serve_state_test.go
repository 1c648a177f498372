package main

import (
	"encoding/base64"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/seal"
)

func TestStateFlags(t *testing.T) {
	dir := t.TempDir()
	key := func(n int, enc *base64.Encoding) string { return enc.EncodeToString([]byte(strings.Repeat("k", n))) }
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		ok   bool
	}{
		{"defaults", nil, true},
		{"one key", []string{"--state-key-file", write("one", key(32, base64.StdEncoding)+"\n")}, true},
		{"rotated, URL alphabet, comments", []string{"--state-key-file", write("two", "# new first\n"+key(40, base64.RawURLEncoding)+"\n\n"+key(32, base64.StdEncoding)+"\n")}, true},
		{"short key", []string{"--state-key-file", write("short", key(31, base64.StdEncoding))}, false},
		{"not base64", []string{"--state-key-file", write("bad", "!!!\n")}, false},
		{"empty file", []string{"--state-key-file", write("empty", "# nothing\n")}, false},
		{"missing file", []string{"--state-key-file", filepath.Join(dir, "nope")}, false},
		{"repeated key", []string{"--state-key-file", write("rep", key(32, base64.StdEncoding)+"\n"+key(32, base64.StdEncoding))}, false},
		{"zero ttl", []string{"--request-state-ttl", "0s"}, false},
		{"tiny size", []string{"--max-request-state", "10"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := addStateFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err := f.load()
			if (err == nil) != c.ok {
				t.Fatalf("load() = %v, want ok=%v", err, c.ok)
			}
			if err != nil {
				return
			}
			var o mcp.ServerOptions
			f.server(&o)
			if o.StateSealer == nil || o.RequestStateTTL != f.ttl {
				t.Fatalf("options %+v", o)
			}
		})
	}
	// Two replicas reading the same file open each other's state.
	p := write("shared", key(32, base64.StdEncoding))
	var rings []*seal.Ring
	for range 2 {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f := addStateFlags(fs)
		_ = fs.Parse([]string{"--state-key-file", p})
		if err := f.load(); err != nil {
			t.Fatal(err)
		}
		rings = append(rings, f.ring)
	}
	s, _ := rings[0].Seal([]byte("x"), time.Minute, nil)
	if got, err := rings[1].Open(s, nil); err != nil || string(got) != "x" {
		t.Fatalf("replica: %q %v", got, err)
	}
	// --help shows the defaults.
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addStateFlags(fs)
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	for _, want := range []string{"(default 10m0s)", "(default 65536)", "-state-key-file"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, b.String())
		}
	}
}
