package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// exampleCommands returns the mcpstack command lines of text (README code
// blocks, --help examples), continuation lines joined, comments cut.
func exampleCommands(text string) []string {
	var cmds []string
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		cont := strings.HasSuffix(line, "\\")
		line = strings.TrimSuffix(line, "\\")
		if cur != "" {
			cur += " " + line
		} else if strings.HasPrefix(line, "mcpstack ") {
			cur = line
		}
		if !cont && cur != "" {
			cmds = append(cmds, cur)
			cur = ""
		}
	}
	return cmds
}

var (
	scopeFlag = regexp.MustCompile(`--scope[ =]('[^']*'|"[^"]*"|\S+)`)
	toolScope = regexp.MustCompile(`--tool-scope[ =]\S+=(\S+)`)
	issuerArg = regexp.MustCompile(`--issuer[ =](\S+)`)
)

// TestExampleScopesFitTogether checks that the protected examples of the
// README and of --help can run together: every scope an example server
// requires (--scope, --tool-scope) is one the example authorization
// servers that list scopes support, and the example servers trust the
// example authorization server's default issuer.
func TestExampleScopesFitTogether(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{"README.md": string(readme), "serve --help": serveExamples, "authserver --help": authserverExamples}
	supported := map[string]bool{}
	var required []string
	var where []string
	for name, text := range texts {
		for _, c := range exampleCommands(text) {
			switch {
			case strings.HasPrefix(c, "mcpstack authserver "):
				for _, m := range scopeFlag.FindAllStringSubmatch(c, -1) {
					for _, s := range strings.Fields(strings.Trim(m[1], `'"`)) {
						supported[s] = true
					}
				}
			case strings.HasPrefix(c, "mcpstack serve ") && strings.Contains(c, "--issuer"):
				for _, m := range scopeFlag.FindAllStringSubmatch(c, -1) {
					for _, s := range strings.Fields(strings.Trim(m[1], `'"`)) {
						required, where = append(required, s), append(where, name+": "+c)
					}
				}
				for _, m := range toolScope.FindAllStringSubmatch(c, -1) {
					required, where = append(required, m[1]), append(where, name+": "+c)
				}
				if m := issuerArg.FindStringSubmatch(c); m == nil || m[1] != "http://127.0.0.1:9000" {
					t.Errorf("%s: %s\n  trusts an issuer other than the example authserver's http://127.0.0.1:9000", name, c)
				}
			}
		}
	}
	if len(supported) == 0 || len(required) == 0 {
		t.Fatalf("no protected examples found (supported %v, required %v)", supported, required)
	}
	for i, s := range required {
		if !supported[s] {
			t.Errorf("%s\n  requires scope %q, which no example authserver supports (%v)", where[i], s, supported)
		}
	}
}
