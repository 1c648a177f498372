package main

import (
	"fmt"
	"strings"
	"testing"
)

// urlElicitServer is a stdio server, as a shell script, whose tool "pay"
// sends a URL-mode elicitation for url and answers with the action the
// client chose ("nourl" if the client did not declare URL mode).
func urlElicitServer(url string) string {
	return fmt.Sprintf(`
id() { printf '%%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read init; printf '{"jsonrpc":"2.0","id":%%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}\n' "$(id "$init")"
read l
read l; call=$(id "$l")
case "$init" in
*'"url":{}'*) ;;
*) printf '{"jsonrpc":"2.0","id":%%s,"result":{"content":[{"type":"text","text":"nourl"}]}}\n' "$call"; read l; exit 0 ;;
esac
printf '{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"mode":"url","elicitationId":"pay-1","url":"%s","message":"Pay for the pizza"}}\n'
read l
case "$l" in
*'"action":"accept"'*) a=accept ;;
*'"action":"decline"'*) a=decline ;;
*'"action":"cancel"'*) a=cancel ;;
*) a=other ;;
esac
printf '{"jsonrpc":"2.0","id":%%s,"result":{"content":[{"type":"text","text":"%%s"}]}}\n' "$call" "$a"
read l
`, url)
}

// TestClientURLElicitation checks URL-mode elicitation: declared, the
// full URL and its host shown before the answer, the answer given as the
// person (or --elicit) says, a URL that is not http(s) declined unseen.
func TestClientURLElicitation(t *testing.T) {
	const pay = "https://pay.example.com/checkout?order=42"
	for _, tc := range []struct {
		name   string
		url    string
		flags  []string
		stdin  string
		action string
		shown  bool // the URL is shown on standard error
	}{
		{"accepted", pay, []string{"--elicit", "prompt"}, "y\n", "accept", true},
		{"refused", pay, []string{"--elicit", "prompt"}, "n\n", "decline", true},
		{"no answer", pay, []string{"--elicit", "prompt"}, "", "cancel", true},
		{"not a terminal", pay, nil, "", "decline", true},
		{"--elicit cancel", pay, []string{"--elicit", "cancel"}, "", "cancel", true},
		{"not a web URL", "javascript:alert(1)", []string{"--elicit", "prompt"}, "y\n", "decline", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"client"}, tc.flags...)
			args = append(args, "call", "pay", "--", "sh", "-c", urlElicitServer(tc.url))
			r := runCmd(t, tc.stdin, args...)
			if r.code != 0 || strings.TrimSpace(r.stdout) != tc.action {
				t.Fatalf("exit %d, result %q, want %q:\n%s", r.code, r.stdout, tc.action, r.stderr)
			}
			if got := strings.Contains(r.stderr, "URL:  "+pay) && strings.Contains(r.stderr, "host: pay.example.com"); got != tc.shown {
				t.Errorf("URL and host shown: %v, want %v:\n%s", got, tc.shown, r.stderr)
			}
		})
	}
}
