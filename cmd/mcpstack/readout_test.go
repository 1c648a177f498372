package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// TestClientReadOutput reads a binary (blob) resource into a file: the
// bytes decoded from base64, mode 0644, an existing file refused unless
// --force.
func TestClientReadOutput(t *testing.T) {
	root := t.TempDir()
	blob := make([]byte, 256)
	for i := range blob {
		blob[i] = byte(255 - i)
	}
	must(t, os.WriteFile(filepath.Join(root, "logo.bin"), blob, 0o600))
	uri := "file://" + filepath.ToSlash(root) + "/logo.bin"
	out := t.TempDir()
	server := []string{"--", self(t), "serve", "--root", root}
	read := func(file string, extra ...string) result {
		args := append([]string{"client"}, extra...)
		args = append(args, "--output", file, "read", uri)
		return runCmd(t, "", append(args, server...)...)
	}

	fresh := filepath.Join(out, "fresh.bin")
	existing := filepath.Join(out, "existing.bin")
	must(t, os.WriteFile(existing, []byte("keep me"), 0o600))
	for _, tc := range []struct {
		name  string
		file  string
		flags []string
		code  int
		want  []byte // the file's content afterwards
	}{
		{"new file", fresh, nil, exitOK, blob},
		{"existing file refused", existing, nil, exitUsage, []byte("keep me")},
		{"existing file with --force", existing, []string{"--force"}, exitOK, blob},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := read(tc.file, tc.flags...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			got, err := os.ReadFile(tc.file)
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Errorf("file holds %q (%v), want %q", got, err, tc.want)
			}
			if tc.code == exitUsage && !strings.Contains(r.stderr, "--force") {
				t.Errorf("refusal does not name --force: %s", r.stderr)
			}
		})
	}
	fi, err := os.Stat(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if want := os.FileMode(0o644) &^ umask(); fi.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), want)
	}
	if r := runCmd(t, "", "client", "--output", fresh, "tools", "--", "true"); r.code != exitUsage {
		t.Errorf("--output with tools: exit %d, want 2", r.code)
	}
}

// umask is the process's file mode creation mask.
func umask() os.FileMode {
	dir, err := os.MkdirTemp("", "umask")
	if err != nil {
		return 0
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "f")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o777)
	if err != nil {
		return 0
	}
	f.Close()
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return 0o777 &^ fi.Mode().Perm()
}

// TestInfoKeepsInstructionLines checks that info prints a server's
// multi-line instructions line by line under their label, with control
// characters neutralized.
func TestInfoKeepsInstructionLines(t *testing.T) {
	var b bytes.Buffer
	p := &printer{w: &b}
	err := p.info(&mcp.InitializeResult{
		ProtocolVersion: "2025-11-25",
		ServerInfo:      mcp.Implementation{Name: "s", Version: "1"},
		Instructions:    "Use the tools in order:\r\n1. list_files\n\n  2. read_file   \n\x1b[31mred\x1b[0m\n",
	}, mcp.EraLegacy)
	if err != nil {
		t.Fatal(err)
	}
	want := "instructions: Use the tools in order:\n" +
		"              1. list_files\n" +
		"\n" +
		"                2. read_file\n" +
		"              \uFFFD[31mred\uFFFD[0m\n"
	if got := b.String(); !strings.HasSuffix(got, want) {
		t.Errorf("info printed\n%s\nwant it to end with\n%s", got, want)
	}
}
