package mcp

import (
	"context"
	"errors"
	"testing"
)

// TestAskCapsByEra checks that CanAsk and the asks read the capabilities
// of the request's era: initialize's in a 2025-11-25 session, the
// request's _meta in a 2026-07-28 request, with or without an input round
// (a completion/complete handler has none), never the session's on the
// modern leg.
func TestAskCapsByEra(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	elicit := ElicitInput(nameForm("?"))
	sampling := SamplingInput(&CreateMessageRequestParams{MaxTokens: 1})
	elicitOnly := &ClientCapabilities{Elicitation: &ElicitationCapability{}}

	legacy := func(caps ClientCapabilities) (*ServerSession, context.Context) {
		ss := &ServerSession{server: s}
		ss.initParams = &InitializeRequestParams{Capabilities: caps}
		return ss, context.Background()
	}
	modern := func(caps *ClientCapabilities) (*ServerSession, context.Context) {
		ss := &ServerSession{server: s}
		// A session that once saw initialize must not lend its
		// capabilities to a modern request.
		ss.initParams = &InitializeRequestParams{Capabilities: ClientCapabilities{Sampling: &SamplingCapability{}}}
		return ss, &modernContext{Context: context.Background(), ss: ss,
			req: modernRequest{meta: RequestMeta{ProtocolVersion: ProtocolVersion20260728, ClientCapabilities: caps}}}
	}
	for _, tc := range []struct {
		name     string
		open     func() (*ServerSession, context.Context)
		elicit   bool
		sampling bool
	}{
		{"legacy elicitation", func() (*ServerSession, context.Context) { return legacy(*elicitOnly) }, true, false},
		{"legacy none", func() (*ServerSession, context.Context) { return legacy(ClientCapabilities{}) }, false, false},
		{"modern elicitation", func() (*ServerSession, context.Context) { return modern(elicitOnly) }, true, false},
		{"modern none", func() (*ServerSession, context.Context) { return modern(nil) }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss, ctx := tc.open()
			if got := ss.CanAsk(ctx, elicit); got != tc.elicit {
				t.Errorf("CanAsk(elicitation) %v, want %v", got, tc.elicit)
			}
			if got := ss.CanAsk(ctx, sampling); got != tc.sampling {
				t.Errorf("CanAsk(sampling) %v, want %v", got, tc.sampling)
			}
			// An ask the request did not declare is refused before
			// anything is sent, in either era.
			if _, err := ss.CreateMessage(ctx, sampling.Sampling); !errors.Is(err, ErrCapabilityNotDeclared) {
				t.Errorf("CreateMessage: %v, want ErrCapabilityNotDeclared", err)
			}
		})
	}

	// A declared ask in a modern request without an input round cannot
	// be sent: the revision has no server-to-client requests.
	ss, ctx := modern(elicitOnly)
	if _, err := ss.Elicit(ctx, nameForm("?")); !errors.Is(err, errNoClientRequests) {
		t.Errorf("Elicit outside a round: %v, want errNoClientRequests", err)
	}
	// Nor can a task-augmented one.
	if _, err := ss.ElicitAsTask(ctx, nameForm("?")); !errors.Is(err, ErrTasksNotSupported) || !errors.Is(err, errNoClientRequests) {
		t.Errorf("ElicitAsTask: %v, want ErrTasksNotSupported and errNoClientRequests", err)
	}
	if _, err := ss.CreateMessageAsTask(ctx, sampling.Sampling); !errors.Is(err, ErrTasksNotSupported) {
		t.Errorf("CreateMessageAsTask: %v, want ErrTasksNotSupported", err)
	}
}
