package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
)

// terminalUI is the client's side of the conversation with the person at
// the terminal: the progress bar, the server's log messages, notifications
// while watching, elicitation forms and sampling approval. Everything but
// results goes to standard error.
type terminalUI struct {
	s   *stdio
	cfg *clientConfig
	tty bool // standard error is a terminal: draw the progress bar

	// askMu serializes conversations (forms, sampling approval); mu
	// serializes output and is not held while waiting for an answer, so
	// that notifications handled on the read loop never wait for the
	// person to type.
	askMu   sync.Mutex
	mu      sync.Mutex
	barOpen bool // a progress bar is drawn on the current line
	in      *bufio.Reader
}

func newTerminalUI(s *stdio, cfg *clientConfig) *terminalUI {
	return &terminalUI{s: s, cfg: cfg, tty: isTerminal(s.err)}
}

// barWidth is the number of cells of the progress bar.
const barWidth = 30

// progressBar renders progress as a bar when the total is known, and as a
// count otherwise.
func progressBar(p *mcp.ProgressNotificationParams) string {
	var b strings.Builder
	if p.Total != nil && *p.Total > 0 {
		frac := math.Max(0, math.Min(1, p.Progress / *p.Total))
		full := int(frac*barWidth + 0.5)
		fmt.Fprintf(&b, "[%s%s] %3.0f%% %s/%s", strings.Repeat("#", full), strings.Repeat(".", barWidth-full), frac*100, num(p.Progress), num(*p.Total))
	} else {
		fmt.Fprintf(&b, "[%s] %s", strings.Repeat("?", barWidth), num(p.Progress))
	}
	if p.Message != "" {
		b.WriteString(" ")
		b.WriteString(p.Message)
	}
	return b.String()
}

// num formats a number without useless decimals.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// progress shows a progress notification: as a bar redrawn in place on a
// terminal, as a line while watching, and otherwise only with -v.
func (ui *terminalUI) progress(ctx context.Context, cs *mcp.ClientSession, p *mcp.ProgressNotificationParams) {
	if ui.cfg.action == "watch" {
		ui.notification("notifications/progress", p)
		return
	}
	ui.mu.Lock()
	defer ui.mu.Unlock()
	switch {
	case ui.tty:
		fmt.Fprintf(ui.s.err, "\r\x1b[K%s", progressBar(p))
		ui.barOpen = true
	case ui.cfg.verbosity > 0:
		fmt.Fprintf(ui.s.err, "progress: %s\n", progressBar(p))
	}
}

// endBar ends the line of a progress bar. ui.mu is held.
func (ui *terminalUI) endBar() {
	if ui.barOpen {
		fmt.Fprintln(ui.s.err)
		ui.barOpen = false
	}
}

// done ends any progress bar.
func (ui *terminalUI) done() {
	ui.mu.Lock()
	defer ui.mu.Unlock()
	ui.endBar()
}

// logMessage shows a server's log message on standard error (or, while
// watching with --json, as a notification on standard output).
func (ui *terminalUI) logMessage(ctx context.Context, cs *mcp.ClientSession, p *mcp.LoggingMessageNotificationParams) {
	if ui.cfg.action == "watch" {
		ui.notification("notifications/message", p)
		return
	}
	ui.mu.Lock()
	defer ui.mu.Unlock()
	ui.endBar()
	var text string
	if err := json.Unmarshal(p.Data, &text); err != nil {
		text = string(p.Data)
	}
	if p.Logger != "" {
		fmt.Fprintf(ui.s.err, "server %s [%s]: %s\n", p.Level, p.Logger, oneLine(text))
	} else {
		fmt.Fprintf(ui.s.err, "server %s: %s\n", p.Level, oneLine(text))
	}
}

// notification prints a notification while watching: a JSON line with
// --json, else the method and its params.
func (ui *terminalUI) notification(method string, params any) {
	ui.mu.Lock()
	defer ui.mu.Unlock()
	ui.endBar()
	raw, err := json.Marshal(params)
	if err != nil || params == nil {
		raw = []byte("{}")
	}
	if ui.cfg.json {
		line, _ := json.Marshal(struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}{method, raw})
		fmt.Fprintf(ui.s.out, "%s\n", line)
		return
	}
	fmt.Fprintf(ui.s.out, "%s %s\n", method, raw)
}

// watching tells the person that the client waits for notifications.
func (ui *terminalUI) watching(target string) {
	ui.mu.Lock()
	defer ui.mu.Unlock()
	fmt.Fprintf(ui.s.err, "watching %s for notifications; interrupt (Ctrl-C) to stop\n", target)
}

// reader returns the reader of the person's answers.
func (ui *terminalUI) reader() *bufio.Reader {
	if ui.in == nil {
		ui.in = bufio.NewReader(ui.s.in)
	}
	return ui.in
}

// ask prints a question and reads one line of answer. io.EOF means the
// person has nothing more to say. ui.askMu and ui.mu are held; ui.mu is
// released while waiting.
func (ui *terminalUI) ask(question string) (string, error) {
	ui.endBar()
	fmt.Fprint(ui.s.err, question)
	ui.mu.Unlock()
	line, err := ui.reader().ReadString('\n')
	ui.mu.Lock()
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// errDecline and errCancel end a form early.
var (
	errDecline = errors.New("declined")
	errCancel  = errors.New("cancelled")
)

// elicit answers elicitation/create: as --elicit says, or by asking the
// person at the terminal one field at a time.
func (ui *terminalUI) elicit(ctx context.Context, cs *mcp.ClientSession, params mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
	mode := ui.cfg.elicit
	if mode == "auto" {
		if isTerminal(ui.s.in) {
			mode = "prompt"
		} else {
			mode = "decline"
		}
	}
	ui.askMu.Lock()
	defer ui.askMu.Unlock()
	ui.mu.Lock()
	defer ui.mu.Unlock()
	ui.endBar()
	if u, ok := params.(*mcp.ElicitRequestURLParams); ok {
		return ui.elicitURL(u, mode)
	}
	form, ok := params.(*mcp.ElicitRequestFormParams)
	if !ok {
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	}
	switch mode {
	case "decline":
		fmt.Fprintf(ui.s.err, "declined the server's request for input (%q): standard input is not a terminal; --elicit prompt reads answers from it\n", form.Message)
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	case "cancel":
		return &mcp.ElicitResult{Action: mcp.ElicitActionCancel}, nil
	}
	content, err := ui.fillForm(form)
	switch {
	case errors.Is(err, errDecline):
		fmt.Fprintln(ui.s.err, "Declined.")
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	case errors.Is(err, errCancel), errors.Is(err, io.EOF):
		fmt.Fprintln(ui.s.err, "Cancelled.")
		return &mcp.ElicitResult{Action: mcp.ElicitActionCancel}, nil
	case err != nil:
		return nil, err
	}
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}, nil
}

// fillForm asks for each field of form, required fields first. ui.mu is
// held.
func (ui *terminalUI) fillForm(form *mcp.ElicitRequestFormParams) (map[string]any, error) {
	required := map[string]bool{}
	for _, r := range form.RequestedSchema.Required {
		required[r] = true
	}
	names := make([]string, 0, len(form.RequestedSchema.Properties))
	for n := range form.RequestedSchema.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	fmt.Fprintf(ui.s.err, "The server asks: %s\n(Enter keeps a default or skips an optional field; !decline declines, !cancel cancels.)\n", oneLine(form.Message))
	content := map[string]any{}
	for _, name := range names {
		f := describeField(name, form.RequestedSchema.Properties[name], required[name])
		for {
			answer, err := ui.ask(f.question)
			if err != nil {
				return nil, err
			}
			switch answer {
			case "!decline":
				return nil, errDecline
			case "!cancel":
				return nil, errCancel
			}
			if answer == "" {
				if f.required && !f.hasDefault {
					fmt.Fprintln(ui.s.err, "  This field is required.")
					continue
				}
				break // the default, if any, is filled in by the library
			}
			v, err := f.parse(answer)
			if err != nil {
				fmt.Fprintf(ui.s.err, "  %v\n", err)
				continue
			}
			content[name] = v
			break
		}
	}
	for {
		answer, err := ui.ask("Send these answers? [Y]es, [n]o (decline), [c]ancel: ")
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(answer) {
		case "", "y", "yes":
			return content, nil
		case "n", "no":
			return nil, errDecline
		case "c", "cancel":
			return nil, errCancel
		}
	}
}

// field is one question of a form.
type field struct {
	question   string
	required   bool
	hasDefault bool
	parse      func(string) (any, error)
}

// describeField makes the question for one field and the parser of its
// answer.
func describeField(name string, def mcp.PrimitiveSchemaDefinition, required bool) field {
	f := field{required: required}
	label, desc, hint := name, "", ""
	var dflt string
	setLabel := func(title, description string) {
		if title != "" {
			label = title
		}
		desc = description
	}
	choice := func(values, titles []string) func(string) (string, error) {
		return func(a string) (string, error) {
			if i, err := strconv.Atoi(a); err == nil && i >= 1 && i <= len(values) {
				return values[i-1], nil
			}
			for i, v := range values {
				if strings.EqualFold(a, v) || (titles != nil && strings.EqualFold(a, titles[i])) {
					return v, nil
				}
			}
			return "", fmt.Errorf("choose one of %s (or its number)", strings.Join(values, ", "))
		}
	}
	listChoices := func(values, titles []string) string {
		parts := make([]string, len(values))
		for i, v := range values {
			if titles != nil && titles[i] != "" && titles[i] != v {
				parts[i] = fmt.Sprintf("%d) %s (%s)", i+1, titles[i], v)
			} else {
				parts[i] = fmt.Sprintf("%d) %s", i+1, v)
			}
		}
		return strings.Join(parts, ", ")
	}
	single := func(values, titles []string, d string) {
		hint, dflt = listChoices(values, titles), d
		pick := choice(values, titles)
		f.parse = func(a string) (any, error) { return pick(a) }
	}
	multi := func(values, titles []string, d []string, minItems, maxItems *int) {
		hint, dflt = listChoices(values, titles)+"; several, separated by commas", strings.Join(d, ",")
		pick := choice(values, titles)
		f.parse = func(a string) (any, error) {
			var out []string
			for _, part := range strings.Split(a, ",") {
				if part = strings.TrimSpace(part); part == "" {
					continue
				}
				v, err := pick(part)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			if minItems != nil && len(out) < *minItems {
				return nil, fmt.Errorf("choose at least %d", *minItems)
			}
			if maxItems != nil && len(out) > *maxItems {
				return nil, fmt.Errorf("choose at most %d", *maxItems)
			}
			return out, nil
		}
	}
	switch d := def.(type) {
	case *mcp.StringSchema:
		setLabel(d.Title, d.Description)
		dflt = d.Default
		if d.Format != "" {
			hint = string(d.Format)
		}
		f.parse = func(a string) (any, error) {
			n := len([]rune(a))
			if d.MinLength != nil && n < *d.MinLength {
				return nil, fmt.Errorf("at least %d characters", *d.MinLength)
			}
			if d.MaxLength != nil && n > *d.MaxLength {
				return nil, fmt.Errorf("at most %d characters", *d.MaxLength)
			}
			return a, nil
		}
	case *mcp.NumberSchema:
		setLabel(d.Title, d.Description)
		if d.Default != nil {
			dflt = num(*d.Default)
		}
		hint = "a number"
		if d.Type == "integer" {
			hint = "a whole number"
		}
		if d.Minimum != nil && d.Maximum != nil {
			hint += fmt.Sprintf(" from %s to %s", num(*d.Minimum), num(*d.Maximum))
		}
		f.parse = func(a string) (any, error) {
			v, err := strconv.ParseFloat(a, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("%q is not a number", a)
			}
			if d.Type == "integer" && v != math.Trunc(v) {
				return nil, fmt.Errorf("%q is not a whole number", a)
			}
			if d.Minimum != nil && v < *d.Minimum {
				return nil, fmt.Errorf("at least %s", num(*d.Minimum))
			}
			if d.Maximum != nil && v > *d.Maximum {
				return nil, fmt.Errorf("at most %s", num(*d.Maximum))
			}
			return v, nil
		}
	case *mcp.BooleanSchema:
		setLabel(d.Title, d.Description)
		hint = "y/n"
		if d.Default != nil {
			dflt = map[bool]string{true: "y", false: "n"}[*d.Default]
		}
		f.parse = func(a string) (any, error) {
			switch strings.ToLower(a) {
			case "y", "yes", "true":
				return true, nil
			case "n", "no", "false":
				return false, nil
			}
			return nil, errors.New("answer y or n")
		}
	case *mcp.UntitledSingleSelectEnumSchema:
		setLabel(d.Title, d.Description)
		single(d.Enum, nil, d.Default)
	case *mcp.LegacyTitledEnumSchema:
		setLabel(d.Title, d.Description)
		var titles []string
		if len(d.EnumNames) == len(d.Enum) {
			titles = d.EnumNames
		}
		single(d.Enum, titles, d.Default)
	case *mcp.TitledSingleSelectEnumSchema:
		setLabel(d.Title, d.Description)
		values, titles := options(d.OneOf)
		single(values, titles, d.Default)
	case *mcp.UntitledMultiSelectEnumSchema:
		setLabel(d.Title, d.Description)
		multi(d.Items.Enum, nil, d.Default, d.MinItems, d.MaxItems)
	case *mcp.TitledMultiSelectEnumSchema:
		setLabel(d.Title, d.Description)
		values, titles := options(d.Items.AnyOf)
		multi(values, titles, d.Default, d.MinItems, d.MaxItems)
	default:
		f.parse = func(a string) (any, error) { return a, nil }
	}
	f.hasDefault = dflt != ""
	var q strings.Builder
	q.WriteString(label)
	if desc != "" {
		fmt.Fprintf(&q, " (%s)", oneLine(desc))
	}
	if hint != "" {
		fmt.Fprintf(&q, " [%s]", hint)
	}
	if required {
		q.WriteString(" (required)")
	}
	if dflt != "" {
		fmt.Fprintf(&q, " (default %s)", dflt)
	}
	q.WriteString(": ")
	f.question = q.String()
	return f
}

func options(opts []mcp.EnumOption) (values, titles []string) {
	for _, o := range opts {
		values = append(values, o.Const)
		titles = append(titles, o.Title)
	}
	return values, titles
}

// maxSamplingOutput bounds what --sampling-cmd may answer.
const maxSamplingOutput = 1 << 20

// sample answers sampling/createMessage with --sampling-cmd, after the
// person agrees when standard input is a terminal.
func (ui *terminalUI) sample(ctx context.Context, cs *mcp.ClientSession, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
	req, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	ui.askMu.Lock()
	defer ui.askMu.Unlock()
	ui.mu.Lock()
	ui.endBar()
	fmt.Fprintf(ui.s.err, "The server asks for a model's answer to %d message(s).\n", len(p.Messages))
	if isTerminal(ui.s.in) {
		answer, err := ui.ask(fmt.Sprintf("Run %q on it? [y/N]: ", ui.cfg.samplingCmd))
		if err != nil || (strings.ToLower(answer) != "y" && strings.ToLower(answer) != "yes") {
			ui.mu.Unlock()
			// -1 is the code the protocol gives a user's rejection.
			return nil, jsonrpc.NewError(-1, "User rejected sampling request")
		}
	}
	ui.mu.Unlock()
	cmd := exec.CommandContext(ctx, "sh", "-c", ui.cfg.samplingCmd)
	cmd.Stdin = bytes.NewReader(req)
	var out limitedBuffer
	out.max = maxSamplingOutput
	cmd.Stdout = &out
	cmd.Stderr = ui.s.err
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("--sampling-cmd failed: %w", err)
	}
	return &mcp.CreateMessageResult{
		Role:       mcp.RoleAssistant,
		Content:    []mcp.Content{&mcp.TextContent{Text: strings.TrimRight(out.String(), "\n")}},
		Model:      "sampling-cmd",
		StopReason: mcp.StopReasonEndTurn,
	}, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room < len(p) {
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
