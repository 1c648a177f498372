package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/mcpstack/mcpstack/mcp"
)

// printer prints the client's results on standard output: for a person,
// or as one JSON document with --json.
type printer struct {
	w    io.Writer
	json bool
}

// emit prints v as one line of JSON.
func (p *printer) emit(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	_, err = fmt.Fprintf(p.w, "%s\n", b)
	return err
}

// info prints what the server said of itself; era is shown in text only,
// the --json document being the InitializeResult as before (for a modern
// server, built from its server/discover answer).
func (p *printer) info(r *mcp.InitializeResult, era mcp.Era) error {
	if p.json {
		return p.emit(r)
	}
	name := r.ServerInfo.Name
	if r.ServerInfo.Title != "" {
		name = fmt.Sprintf("%s (%s)", r.ServerInfo.Title, r.ServerInfo.Name)
	}
	fmt.Fprintf(p.w, "server:       %s %s\n", name, r.ServerInfo.Version)
	fmt.Fprintf(p.w, "protocol:     %s (%s)\n", r.ProtocolVersion, era)
	caps, _ := json.Marshal(r.Capabilities)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(caps, &m)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(p.w, "capabilities: %s\n", strings.Join(names, ", "))
	if r.Instructions != "" {
		fmt.Fprintf(p.w, "instructions: %s\n", indentLines(r.Instructions, "              "))
	}
	return nil
}

// indentLines keeps the lines of a server's multi-line text, indenting
// every line after the first by indent so that it stays under its label.
// Trailing blanks are dropped, and control characters (which could move
// the terminal's cursor or change its colours) are shown as U+FFFD.
func indentLines(s, indent string) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), " \t\r\n"), "\n")
	for i, l := range lines {
		l = strings.Map(func(r rune) rune {
			if r != '\t' && unicode.IsControl(r) {
				return '\uFFFD'
			}
			return r
		}, strings.TrimRight(l, " \t\r"))
		if i > 0 && l != "" {
			l = indent + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

func (p *printer) pong(d time.Duration) error {
	if p.json {
		return p.emit(map[string]any{"ok": true, "ms": float64(d.Microseconds()) / 1000})
	}
	fmt.Fprintf(p.w, "pong in %s\n", d.Round(time.Microsecond))
	return nil
}

// tools prints ts. The task hint depends on era: on the 2025-11-25 leg
// the client asks for a task (--task); on the 2026-07-28 one the server
// decides and call follows the task it returns (changelog, major change
// 6), so --task changes nothing there.
func (p *printer) tools(ts []*mcp.Tool, era mcp.Era) error {
	if p.json {
		return p.emit(map[string]any{"tools": nonNil(ts)})
	}
	for _, t := range ts {
		fmt.Fprintf(p.w, "%s(%s)\n", t.Name, schemaArgs(t.InputSchema))
		if t.Description != "" {
			fmt.Fprintf(p.w, "    %s\n", oneLine(t.Description))
		}
		if t.Execution != nil {
			switch {
			case t.Execution.TaskSupport == mcp.TaskSupportRequired && era == mcp.EraModern:
				fmt.Fprintf(p.w, "    runs as a task only (call waits for its result)\n")
			case t.Execution.TaskSupport == mcp.TaskSupportRequired:
				fmt.Fprintf(p.w, "    runs as a task only (call it with --task)\n")
			case t.Execution.TaskSupport == mcp.TaskSupportOptional && era == mcp.EraModern:
				fmt.Fprintf(p.w, "    may run as a task (call waits for its result)\n")
			case t.Execution.TaskSupport == mcp.TaskSupportOptional:
				fmt.Fprintf(p.w, "    may run as a task (--task)\n")
			}
		}
	}
	return nil
}

// schemaArgs summarizes an object schema's properties: "name: type",
// with "?" after optional ones.
func schemaArgs(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return "…"
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if req[names[i]] != req[names[j]] {
			return req[names[i]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		typ := "any"
		switch t := s.Properties[n].Type.(type) {
		case string:
			typ = t
		case []any:
			var ts []string
			for _, x := range t {
				ts = append(ts, fmt.Sprint(x))
			}
			typ = strings.Join(ts, "|")
		}
		opt := ""
		if !req[n] {
			opt = "?"
		}
		parts[i] = fmt.Sprintf("%s%s: %s", n, opt, typ)
	}
	return strings.Join(parts, ", ")
}

func (p *printer) resources(rs []*mcp.Resource) error {
	if p.json {
		return p.emit(map[string]any{"resources": nonNil(rs)})
	}
	for _, r := range rs {
		fmt.Fprintf(p.w, "%s  %s", r.URI, r.Name)
		if r.MIMEType != "" {
			fmt.Fprintf(p.w, "  (%s)", r.MIMEType)
		}
		fmt.Fprintln(p.w)
		if r.Description != "" {
			fmt.Fprintf(p.w, "    %s\n", oneLine(r.Description))
		}
	}
	return nil
}

func (p *printer) templates(ts []*mcp.ResourceTemplate) error {
	if p.json {
		return p.emit(map[string]any{"resourceTemplates": nonNil(ts)})
	}
	for _, t := range ts {
		fmt.Fprintf(p.w, "%s  %s\n", t.URITemplate, t.Name)
		if t.Description != "" {
			fmt.Fprintf(p.w, "    %s\n", oneLine(t.Description))
		}
	}
	return nil
}

func (p *printer) prompts(ps []*mcp.Prompt) error {
	if p.json {
		return p.emit(map[string]any{"prompts": nonNil(ps)})
	}
	for _, pr := range ps {
		args := make([]string, len(pr.Arguments))
		for i, a := range pr.Arguments {
			args[i] = a.Name
			if a.Required == nil || !*a.Required {
				args[i] += "?"
			}
		}
		fmt.Fprintf(p.w, "%s(%s)\n", pr.Name, strings.Join(args, ", "))
		if pr.Description != "" {
			fmt.Fprintf(p.w, "    %s\n", oneLine(pr.Description))
		}
	}
	return nil
}

func (p *printer) callResult(r *mcp.CallToolResult) error {
	if p.json {
		return p.emit(r)
	}
	if r.IsError != nil && *r.IsError {
		fmt.Fprintln(p.w, "tool error:")
	}
	for _, c := range r.Content {
		p.content(c)
	}
	if len(r.StructuredContent) > 0 {
		fmt.Fprintf(p.w, "structured: %s\n", r.StructuredContent)
	}
	return nil
}

// content prints one content block: text as it is, other blocks as a
// one-line description.
func (p *printer) content(c mcp.Content) {
	switch c := c.(type) {
	case *mcp.TextContent:
		fmt.Fprintln(p.w, c.Text)
	case *mcp.ImageContent:
		fmt.Fprintf(p.w, "[image %s, %d bytes]\n", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		fmt.Fprintf(p.w, "[audio %s, %d bytes]\n", c.MIMEType, len(c.Data))
	case *mcp.ResourceLink:
		fmt.Fprintf(p.w, "[link %s %s]\n", c.URI, c.Name)
	case *mcp.EmbeddedResource:
		p.resourceContents(c.Resource)
	default:
		b, _ := json.Marshal(c)
		fmt.Fprintf(p.w, "%s\n", b)
	}
}

func (p *printer) resourceContents(rc mcp.ResourceContents) {
	switch rc := rc.(type) {
	case *mcp.TextResourceContents:
		fmt.Fprintf(p.w, "[resource %s %s]\n%s\n", rc.URI, rc.MIMEType, rc.Text)
	case *mcp.BlobResourceContents:
		fmt.Fprintf(p.w, "[resource %s %s, %d bytes]\n", rc.URI, rc.MIMEType, len(rc.Blob))
	}
}

// wrote reports a resource written to a file by read --output.
func (p *printer) wrote(file, mime string, n int) error {
	if p.json {
		return p.emit(map[string]any{"file": file, "mimeType": mime, "bytes": n})
	}
	_, err := fmt.Fprintf(p.w, "wrote %d bytes (%s) to %s\n", n, mime, file)
	return err
}

func (p *printer) readResult(r *mcp.ReadResourceResult) error {
	if p.json {
		return p.emit(r)
	}
	for _, c := range r.Contents {
		p.resourceContents(c)
	}
	return nil
}

func (p *printer) promptResult(r *mcp.GetPromptResult) error {
	if p.json {
		return p.emit(r)
	}
	if r.Description != "" {
		fmt.Fprintf(p.w, "# %s\n", oneLine(r.Description))
	}
	for _, m := range r.Messages {
		fmt.Fprintf(p.w, "%s: ", m.Role)
		p.content(m.Content)
	}
	return nil
}

func (p *printer) completion(r *mcp.CompleteResult) error {
	if p.json {
		return p.emit(r)
	}
	for _, v := range r.Completion.Values {
		fmt.Fprintln(p.w, v)
	}
	if r.Completion.HasMore != nil && *r.Completion.HasMore {
		fmt.Fprintln(p.w, "…")
	}
	return nil
}

// nonNil makes a nil slice encode as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
