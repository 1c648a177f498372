package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"time"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// The stdio era probe in a throwaway process (EraPolicyProbeSibling).
// Revision 2026-07-28 lets a client probe a server with server/discover
// before it decides between the eras (basic/versioning, "Backward
// Compatibility with Initialization-Based Versions"), but a legacy stdio
// server may answer a request before initialize by exiting, which would
// end the very connection the client wants (the field notes, §2: the
// TypeScript SDK v2 probes in a sibling process for that reason). For a
// server the client starts itself (CommandTransport), the probe can go to
// a second process of the same command instead: that one may die, the
// real one never sees a request before it knows the era.

// siblingTerminateTimeout is the TerminateTimeout of the probe process:
// it is told to go (stdin closed) as soon as the probe has its answer,
// and need not be waited for long before SIGTERM and SIGKILL.
const siblingTerminateTimeout = time.Second

// errSiblingGone is the cause of a sibling probe whose process could not
// be started, or ended (exited, closed its output) before it answered:
// a legacy server that exits on a request before initialize.
var errSiblingGone = errors.New("mcp: the probe process ended without answering server/discover")

// siblingCommand returns the CommandTransport the session was connected
// with, or nil when the transport is another kind.
func (cs *ClientSession) siblingCommand() *CommandTransport {
	ct, ok := cs.transport.(*CommandTransport)
	if !ok || ct.Command == nil {
		return nil
	}
	return ct
}

// siblingCmd returns a new, unstarted command that runs what c runs: the
// same path, arguments, environment, directory and process attributes.
// Its standard error is discarded: the probe's complaints (a legacy
// server's "unknown method") would only confuse, and c.Stderr may be a
// writer that is not safe for a second process's output.
func siblingCmd(c *exec.Cmd) *exec.Cmd {
	s := &exec.Cmd{Path: c.Path, Args: slices.Clone(c.Args), Env: slices.Clone(c.Env), Dir: c.Dir, Stderr: io.Discard}
	if c.SysProcAttr != nil {
		attr := *c.SysProcAttr
		s.SysProcAttr = &attr
	}
	return s
}

// probeSibling sends server/discover, with the session's modern _meta, to
// a new process of ct's command and returns its answer. The process is
// shut down before probeSibling returns. The wait for the answer is
// bounded by ClientOptions.ProbeTimeout (errProbeTimeout, as for the
// in-band stdio probe); an exit before the answer is errSiblingGone; a
// JSON-RPC error is returned as such. Both of the former are evidence of
// a legacy server (legacyEvidence).
func (cs *ClientSession) probeSibling(ctx context.Context, ct *CommandTransport) (*DiscoverResult, error) {
	d := cs.client.opts.ProbeTimeout
	if d <= 0 {
		d = DefaultProbeTimeout
	}
	pctx, cancel := context.WithTimeoutCause(ctx, d, errProbeTimeout)
	defer cancel()
	meta, _ := cs.requestMeta()
	params, err := withModernMeta(nil, meta)
	if err != nil {
		return nil, err
	}
	st := &CommandTransport{Command: siblingCmd(ct.Command), TerminateTimeout: siblingTerminateTimeout, MaxMessageSize: ct.MaxMessageSize}
	stream, err := st.Connect(pctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSiblingGone, err)
	}
	defer stream.Close()
	// A line stream's Read does not follow its context: closing the
	// stream ends it when the probe times out or the caller leaves.
	defer context.AfterFunc(pctx, func() { _ = stream.Close() })()
	id := jsonrpc.Int64ID(1)
	if err := stream.Write(pctx, &jsonrpc.Request{ID: id, Method: MethodServerDiscover, Params: params}); err != nil {
		return nil, cs.siblingReadError(ctx, pctx, err)
	}
	for {
		m, err := stream.Read(pctx)
		if err != nil {
			return nil, cs.siblingReadError(ctx, pctx, err)
		}
		resp, ok := m.(*jsonrpc.Response)
		if !ok || resp.ID != id {
			continue // a notification (a log line, say) or a request: not the answer
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		var res DiscoverResult
		if err := parseParams(resp.Result, &res); err != nil {
			return nil, err
		}
		if len(res.SupportedVersions) == 0 {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "mcp: server/discover answered without supportedVersions")
		}
		return &res, nil
	}
}

// siblingReadError classifies the failure to hear from the probe process:
// the caller's context, the probe timeout, or the process gone.
func (cs *ClientSession) siblingReadError(ctx, pctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(context.Cause(pctx), errProbeTimeout) {
		return errProbeTimeout
	}
	return fmt.Errorf("%w: %w", errSiblingGone, err)
}
