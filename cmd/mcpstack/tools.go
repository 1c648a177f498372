package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
	"github.com/mcpstack/mcpstack/jsonschema"
	"github.com/mcpstack/mcpstack/mcp"
)

// maxFileBytes bounds what read_file returns.
const maxFileBytes = 1 << 20

// exampleServer returns the server that serve runs and demo talks to.
// With a root, it watches the root's files for changes until ctx is done.
func exampleServer(ctx context.Context, opts serveOptions) (*mcp.Server, error) {
	var files *fileResources
	if opts.root != "" {
		files = newFileResources(opts.root)
	}
	so := &mcp.ServerOptions{
		Logger:            opts.logger,
		MaxQueuedRequests: opts.maxQueued,
		Instructions:      "Tools: echo repeats text; count counts slowly, reporting progress; sleep sleeps, as a task when the client supports tasks; time tells the time; fetch fetches a web page; ask asks the user; list_files and read_file read the files under the server's root, which are also resources. Prompts: haiku, and summarize_file with a root.",
		Capabilities:      &mcp.ServerCapabilities{Logging: &mcp.LoggingCapability{}},
		SchemaLimits:      jsonschema.Limits{MaxInstanceDepth: opts.maxArgumentDepth, MaxValidationWork: opts.maxValidationWork},
		CompletionHandler: func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
			return complete(files, p), nil
		},
	}
	opts.limits.server(so)
	opts.state.server(so)
	// Tasks (2025-11-25 tasks and the 2026-07-28 extension) for the sleep
	// tool: in memory, or with --redis in the store every replica shares,
	// so that tasks/get, tasks/update and tasks/cancel work on any.
	tasks := mcp.NewTasks(&mcp.TaskOptions{Store: opts.taskStore, Cancel: true, Logger: opts.logger})
	so.ReceivingMiddleware = append(so.ReceivingMiddleware, tasks.Middleware())
	so.SendingMiddleware = append(so.SendingMiddleware, tasks.SendingMiddleware())
	s := mcp.NewServer(&mcp.Implementation{
		Name:    "mcpstack-example",
		Title:   "mcpstack example server",
		Version: version,
	}, so)
	ft := newFetcher(maxFileBytes, 15*time.Second, opts.fetchPrivate)
	tools := []struct {
		t *mcp.Tool
		h mcp.ToolHandler
	}{
		{&mcp.Tool{
			Name:        "echo",
			Description: "Repeats the text it is given.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
		}, echoTool},
		{&mcp.Tool{
			Name:        "count",
			Description: "Counts to n, one step every interval_ms milliseconds, reporting progress; stops when cancelled.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":1000},"interval_ms":{"type":"integer","minimum":0,"maximum":10000}},"required":["n"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
		}, countTool},
		{&mcp.Tool{
			Name:        "sleep",
			Description: "Sleeps ms milliseconds (10 minutes at most), as a task when the client supports tasks (tasks/get reports it from any replica), and says how long it slept; stops when cancelled.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":600000}},"required":["ms"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
			Execution:   &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional},
		}, sleepTool},
		{&mcp.Tool{
			Name:         "time",
			Description:  "Tells the current time in an IANA time zone (UTC by default).",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string","description":"IANA time zone name, such as Europe/Paris"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"time":{"type":"string"},"timezone":{"type":"string"},"unix":{"type":"integer"}},"required":["time","timezone","unix"]}`),
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
		}, timeTool},
		{&mcp.Tool{
			Name:        "fetch",
			Description: "Fetches an http or https URL and returns its body (1 MiB at most).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"an http or https URL"}},"required":["url"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(true)},
		}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
			return fetchTool(ctx, ss, ft, p)
		}},
		{&mcp.Tool{
			Name:        "ask",
			Description: "Asks the user for their name and favourite colour (form elicitation) and greets them.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
		}, askTool},
	}
	if opts.root != "" {
		root := opts.root
		tools = append(tools, []struct {
			t *mcp.Tool
			h mcp.ToolHandler
		}{
			{&mcp.Tool{
				Name:        "list_files",
				Description: "Lists a directory under the server's root: one entry a line, directories ending in /.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a slash-separated path relative to the root; empty for the root"}}}`),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
			}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return listFilesTool(root, p)
			}},
			{&mcp.Tool{
				Name:        "read_file",
				Description: "Reads a file under the server's root (1 MiB at most).",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a slash-separated path relative to the root"}},"required":["path"]}`),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
			}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return readFileTool(root, p)
			}},
		}...)
	}
	if opts.upstream != nil {
		tools = append(tools, struct {
			t *mcp.Tool
			h mcp.ToolHandler
		}{whoamiUpstreamTool, opts.upstream.call})
	}
	for _, t := range tools {
		if err := s.AddTool(t.t, t.h); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.t.Name, err)
		}
	}
	if err := addPrompts(s, files); err != nil {
		return nil, err
	}
	if files != nil {
		if err := files.register(s); err != nil {
			return nil, fmt.Errorf("resources under %s: %w", opts.root, err)
		}
		go files.watch(ctx, s, pollInterval, opts.announce)
	}
	return s, nil
}

// pollInterval is how often the server looks for changed files.
const pollInterval = 500 * time.Millisecond

var seasons = []string{"spring", "summer", "autumn", "winter"}

var styles = []string{"brief", "detailed"}

// addPrompts adds haiku, and summarize_file when there are files.
func addPrompts(s *mcp.Server, files *fileResources) error {
	err := s.AddPrompt(&mcp.Prompt{
		Name:        "haiku",
		Title:       "Write a haiku",
		Description: "Asks the model for a haiku on a topic, in a season if given.",
		Arguments: []mcp.PromptArgument{
			{Name: "topic", Description: "what the haiku is about", Required: ptr(true)},
			{Name: "season", Description: "spring, summer, autumn or winter"},
		},
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
		text := fmt.Sprintf("Write a haiku about %s.", p.Arguments["topic"])
		if season := p.Arguments["season"]; season != "" {
			text = fmt.Sprintf("Write a haiku about %s, set in %s.", p.Arguments["topic"], season)
		}
		return &mcp.GetPromptResult{
			Description: "A haiku",
			Messages:    []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: text}}},
		}, nil
	})
	if err != nil || files == nil {
		return err
	}
	return s.AddPrompt(&mcp.Prompt{
		Name:        "summarize_file",
		Title:       "Summarize a file",
		Description: "Asks the model to summarize a file under the server's root.",
		Arguments: []mcp.PromptArgument{
			{Name: "path", Description: "the file, relative to the root", Required: ptr(true)},
			{Name: "style", Description: "brief or detailed"},
		},
	}, func(ctx context.Context, ss *mcp.ServerSession, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
		rel, err := pathArg(mustJSON(map[string]string{"path": p.Arguments["path"]}), true)
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "summarize_file: %v", err)
		}
		res, err := files.read(ctx, ss, &mcp.ReadResourceRequestParams{URI: files.uri(rel)})
		if err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "summarize_file: cannot read %s", rel)
		}
		style := p.Arguments["style"]
		if style == "" {
			style = "brief"
		}
		return &mcp.GetPromptResult{
			Description: "Summarize " + rel,
			Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: fmt.Sprintf("Give a %s summary of the file %s below.", style, rel)}},
				{Role: mcp.RoleUser, Content: &mcp.EmbeddedResource{Resource: res.Contents[0]}},
			},
		}, nil
	})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// complete answers completion/complete for the prompts' arguments and the
// file template's path.
func complete(files *fileResources, p *mcp.CompleteRequestParams) *mcp.CompleteResult {
	var values []string
	prefixed := func(all []string) {
		for _, v := range all {
			if strings.HasPrefix(v, strings.ToLower(p.Argument.Value)) {
				values = append(values, v)
			}
		}
	}
	switch ref := p.Ref.(type) {
	case *mcp.PromptReference:
		switch {
		case ref.Name == "haiku" && p.Argument.Name == "season":
			prefixed(seasons)
		case ref.Name == "summarize_file" && p.Argument.Name == "style":
			prefixed(styles)
		case ref.Name == "summarize_file" && p.Argument.Name == "path" && files != nil:
			values = files.completePaths(p.Argument.Value)
		}
	case *mcp.ResourceTemplateReference:
		if files != nil && ref.URI == files.prefix+"{+path}" && p.Argument.Name == "path" {
			values = files.completePaths(p.Argument.Value)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.Completion{Values: values}}
}

func ptr[T any](v T) *T { return &v }

// toolError is a tool result that reports a failure to the model.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: ptr(true), Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// textResult is a tool result of one text block.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func echoTool(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	var in struct {
		Text *string `json:"text"`
	}
	if err := strictjson.Unmarshal(p.Arguments, &in); err != nil || in.Text == nil {
		return toolError(`echo needs a string argument "text"`), nil
	}
	return textResult(*in.Text), nil
}

func countTool(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	var in struct {
		N          int `json:"n"`
		IntervalMS int `json:"interval_ms"`
	}
	if err := strictjson.Unmarshal(p.Arguments, &in); err != nil || in.N < 1 || in.N > 1000 {
		return toolError("count needs an integer n between 1 and 1000"), nil
	}
	token, hasToken := p.Meta.ProgressToken()
	total := float64(in.N)
	for i := 1; i <= in.N; i++ {
		t := time.NewTimer(time.Duration(in.IntervalMS) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "cancelled")
		case <-t.C:
		}
		_ = ss.Log(ctx, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelDebug, Logger: "count", Data: mustJSON(fmt.Sprintf("counted %d", i))})
		if hasToken {
			_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i), Total: &total,
				Message: fmt.Sprintf("counted %d of %d", i, in.N),
			})
		}
	}
	return textResult(fmt.Sprintf("counted to %d", in.N)), nil
}

// sleepTool sleeps, as a task when the call can become one (BeginTask).
func sleepTool(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	var in struct {
		MS int `json:"ms"`
	}
	if err := strictjson.Unmarshal(p.Arguments, &in); err != nil || in.MS < 0 || in.MS > 600000 {
		return toolError("sleep needs an integer ms between 0 and 600000"), nil
	}
	if err := mcp.BeginTask(ctx); err != nil {
		return nil, err
	}
	t := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "cancelled")
	case <-t.C:
	}
	return textResult(fmt.Sprintf("slept %d ms", in.MS)), nil
}

func timeTool(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	var in struct {
		TimeZone string `json:"timezone"`
	}
	if len(p.Arguments) > 0 {
		if err := strictjson.Unmarshal(p.Arguments, &in); err != nil {
			return toolError("time takes an optional string argument \"timezone\""), nil
		}
	}
	if in.TimeZone == "" {
		in.TimeZone = "UTC"
	}
	loc, err := time.LoadLocation(in.TimeZone)
	if err != nil {
		return toolError("unknown time zone %q", in.TimeZone), nil
	}
	now := time.Now().In(loc)
	out := struct {
		Time     string `json:"time"`
		TimeZone string `json:"timezone"`
		Unix     int64  `json:"unix"`
	}{now.Format(time.RFC3339), loc.String(), now.Unix()}
	sc, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: now.Format("Monday 2 January 2006, 15:04:05 MST")}},
		StructuredContent: sc,
	}, nil
}

func fetchTool(ctx context.Context, ss *mcp.ServerSession, f *fetcher, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	var in struct {
		URL string `json:"url"`
	}
	if err := strictjson.Unmarshal(p.Arguments, &in); err != nil || in.URL == "" {
		return toolError(`fetch needs a string argument "url"`), nil
	}
	_ = ss.Log(ctx, &mcp.LoggingMessageNotificationParams{Level: mcp.LoggingLevelInfo, Logger: "fetch", Data: mustJSON("fetching " + in.URL)})
	r, err := f.fetch(ctx, in.URL)
	if err != nil {
		return toolError("fetch %s: %v", in.URL, err), nil
	}
	res := &mcp.CallToolResult{}
	if r.Status >= 400 {
		res.IsError = ptr(true)
	}
	note := fmt.Sprintf("HTTP %d from %s (%s, %d bytes", r.Status, r.URL, r.ContentType, len(r.Body))
	if r.Truncated {
		note += ", truncated"
	}
	note += ")"
	res.Content = append(res.Content, &mcp.TextContent{Text: note})
	mt, _, _ := mime.ParseMediaType(r.ContentType)
	if isTextual(mt) && utf8.Valid(r.Body) {
		res.Content = append(res.Content, &mcp.TextContent{Text: string(r.Body)})
	} else {
		res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.BlobResourceContents{URI: r.URL, MIMEType: mt, Blob: r.Body}})
	}
	return res, nil
}

func isTextual(mediaType string) bool {
	return strings.HasPrefix(mediaType, "text/") || mediaType == "application/json" ||
		strings.HasSuffix(mediaType, "+json") || strings.HasSuffix(mediaType, "+xml") ||
		mediaType == "application/xml" || mediaType == "application/javascript" || mediaType == ""
}

func askTool(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	form := &mcp.ElicitRequestFormParams{
		Message: "The example server would like to greet you.",
		RequestedSchema: mcp.RequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{
				"name":   &mcp.StringSchema{Title: "Your name", MinLength: ptr(1)},
				"colour": &mcp.UntitledSingleSelectEnumSchema{Title: "Favourite colour", Enum: []string{"red", "green", "blue"}, Default: "blue"},
			},
			Required: []string{"name"},
		},
	}
	// CanAsk reads the capabilities of the request's era: its own _meta
	// (2026-07-28) or initialize's (2025-11-25).
	if !ss.CanAsk(ctx, mcp.ElicitInput(form)) {
		return toolError("ask needs a client that supports elicitation"), nil
	}
	res, err := ss.Elicit(ctx, form)
	if errors.Is(err, mcp.ErrInputRequired) {
		return nil, err // 2026-07-28: the client answers and retries the call
	}
	if err != nil {
		return toolError("elicitation failed: %v", err), nil
	}
	switch res.Action {
	case mcp.ElicitActionAccept:
		name, _ := res.Content["name"].(string)
		colour, _ := res.Content["colour"].(string)
		return textResult(fmt.Sprintf("Hello, %s! %s is a fine colour.", name, colour)), nil
	default:
		return textResult(fmt.Sprintf("The user chose to %s.", res.Action)), nil
	}
}

// pathArg returns the "path" argument as a clean slash-separated path
// relative to the root ("." when absent and not required). The tools then
// open it through os.Root, which refuses any path that leaves the root,
// by ".." or by symbolic links.
func pathArg(args json.RawMessage, required bool) (string, error) {
	var in struct {
		Path string `json:"path"`
	}
	if len(args) > 0 {
		if err := strictjson.Unmarshal(args, &in); err != nil {
			return "", errors.New(`"path" must be a string`)
		}
	}
	if in.Path == "" {
		if required {
			return "", errors.New(`a "path" is required`)
		}
		in.Path = "."
	}
	if strings.ContainsRune(in.Path, 0) || strings.Contains(in.Path, `\`) {
		return "", fmt.Errorf("invalid path %q", in.Path)
	}
	clean := path.Clean(strings.TrimPrefix(in.Path, "/"))
	if !fs.ValidPath(clean) {
		return "", fmt.Errorf("path %q leaves the root", in.Path)
	}
	return clean, nil
}

func listFilesTool(root string, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	rel, err := pathArg(p.Arguments, false)
	if err != nil {
		return toolError("list_files: %v", err), nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	entries, err := fs.ReadDir(r.FS(), rel)
	if err != nil {
		return toolError("list_files: %v", rootError(err, rel)), nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return textResult(strings.Join(names, "\n")), nil
}

func readFileTool(root string, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	rel, err := pathArg(p.Arguments, true)
	if err != nil {
		return toolError("read_file: %v", err), nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		return toolError("read_file: %v", rootError(err, rel)), nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return toolError("read_file: %s is not a regular file", rel), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return toolError("read_file: %v", rootError(err, rel)), nil
	}
	if len(data) > maxFileBytes {
		return toolError("read_file: %s is larger than %d bytes", rel, maxFileBytes), nil
	}
	uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, filepath.FromSlash(rel)))}).String()
	mt := mime.TypeByExtension(path.Ext(rel))
	if utf8.Valid(data) {
		if mt == "" {
			mt = "text/plain"
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: uri, MIMEType: mt, Text: string(data)}}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.BlobResourceContents{URI: uri, MIMEType: mt, Blob: data}}}}, nil
}

// rootError says what went wrong with rel in terms of the path the caller
// gave.
func rootError(err error, rel string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s does not exist", rel)
		}
		return fmt.Errorf("%s: %v", rel, pe.Err)
	}
	return err
}
