package main

import (
	"flag"
	"io"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// TestListenBytesFlag checks --max-listen-bytes: its default is the
// library's, 0 turns the bound off (the option's -1), and a negative
// value is a usage error.
func TestListenBytesFlag(t *testing.T) {
	tests := []struct {
		args []string
		want int64
		bad  bool
	}{
		{nil, mcp.DefaultMaxListenBytes, false},
		{[]string{"--max-listen-bytes", "4096"}, 4096, false},
		{[]string{"--max-listen-bytes", "0"}, -1, false},
		{[]string{"--max-listen-bytes", "-5"}, 0, true},
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
	}
}
