package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"strings"

	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/mcp"
)

// elicitURL answers a URL-mode elicitation (MCP 2025-11-25, client
// elicitation, "URL mode"): the server asks the person to visit a page
// (a third-party login, a payment) that must not pass through the client.
// The full URL and its host are shown before anything happens; the page is
// opened only after the person agrees, and only when standard input is a
// terminal (with --elicit prompt from a pipe the answer is read but no
// browser is started). The client never fetches the URL itself. Accept
// means only that the person agreed to go there: the server reports the
// end of the flow with notifications/elicitation/complete.
// ui.askMu and ui.mu are held.
func (ui *terminalUI) elicitURL(p *mcp.ElicitRequestURLParams, mode string) (*mcp.ElicitResult, error) {
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		fmt.Fprintf(ui.s.err, "declined the server's request to visit %q: not an http or https URL\n", indentLines(p.URL, ""))
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	}
	fmt.Fprintf(ui.s.err, "The server asks you to visit a web page: %s\n  URL:  %s\n  host: %s\n",
		indentLines(p.Message, "  "), indentLines(p.URL, ""), indentLines(u.Hostname(), ""))
	switch mode {
	case "decline":
		fmt.Fprintln(ui.s.err, "Declined: standard input is not a terminal; --elicit prompt reads the answer from it.")
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	case "cancel":
		return &mcp.ElicitResult{Action: mcp.ElicitActionCancel}, nil
	}
	interactive := isTerminal(ui.s.in)
	question := "Open it in the browser? [y/N]: "
	if !interactive || ui.cfg.noBrowser {
		question = "Will you visit it? [y/N]: "
	}
	answer, err := ui.ask(question)
	switch {
	case errors.Is(err, io.EOF):
		fmt.Fprintln(ui.s.err, "Cancelled.")
		return &mcp.ElicitResult{Action: mcp.ElicitActionCancel}, nil
	case err != nil:
		return nil, err
	}
	if a := strings.ToLower(answer); a != "y" && a != "yes" {
		fmt.Fprintln(ui.s.err, "Declined.")
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	}
	if interactive && !ui.cfg.noBrowser {
		if err := ui.openURL(p.URL); err != nil {
			fmt.Fprintf(ui.s.err, "The browser did not open (%v); visit the URL above.\n", err)
		}
	}
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept}, nil
}

// openURL opens u with --browser-cmd, or the system browser, which opens
// only https URLs and http URLs on loopback hosts.
func (ui *terminalUI) openURL(u string) error {
	if ui.cfg.browserCmd == "" {
		return authclient.OpenBrowser(u)
	}
	fields := strings.Fields(ui.cfg.browserCmd)
	cmd := exec.Command(fields[0], append(fields[1:], u)...)
	cmd.Stdout, cmd.Stderr = ui.s.err, ui.s.err
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped; its failure is the person's to see
	return nil
}

// elicitationComplete tells the person that the server reports a URL
// elicitation finished (notifications/elicitation/complete). The library
// passes only ids this session received, once each.
func (ui *terminalUI) elicitationComplete(ctx context.Context, cs *mcp.ClientSession, p *mcp.ElicitationCompleteNotificationParams) {
	ui.mu.Lock()
	defer ui.mu.Unlock()
	ui.endBar()
	fmt.Fprintf(ui.s.err, "The server reports the web page's flow %s complete.\n", indentLines(p.ElicitationID, ""))
}
