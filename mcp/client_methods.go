package mcp

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// ListResources lists the server's resources, one page at a time; pass the
// previous page's NextCursor in p.Cursor for the next. Resources iterates
// over every page.
func (cs *ClientSession) ListResources(ctx context.Context, p *PaginatedRequestParams) (*ListResourcesResult, error) {
	var res ListResourcesResult
	if err := cs.call(ctx, MethodResourcesList, orEmptyPage(p), &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListResourceTemplates lists the server's resource templates, one page at
// a time. ResourceTemplates iterates over every page.
func (cs *ClientSession) ListResourceTemplates(ctx context.Context, p *PaginatedRequestParams) (*ListResourceTemplatesResult, error) {
	var res ListResourceTemplatesResult
	if err := cs.call(ctx, MethodResourcesTemplatesList, orEmptyPage(p), &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ReadResource reads a resource. A server that does not know the URI
// answers with CodeResourceNotFound, which errors.Is matches against a
// *jsonrpc.Error of that code.
func (cs *ClientSession) ReadResource(ctx context.Context, p *ReadResourceRequestParams) (*ReadResourceResult, error) {
	var res ReadResourceResult
	if err := cs.call(ctx, MethodResourcesRead, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Subscribe asks the server for notifications/resources/updated when the
// resource changes; ClientOptions.ResourceUpdatedHandler receives them.
// The server must have declared resources.subscribe.
// Revision 2026-07-28 removed resources/subscribe: on a modern session
// Subscribe returns ErrRemovedInModern; use Listen, which works in both
// eras.
func (cs *ClientSession) Subscribe(ctx context.Context, p *SubscribeRequestParams) error {
	if cs.modern() {
		return fmt.Errorf("%w: %s (use Listen)", ErrRemovedInModern, MethodResourcesSubscribe)
	}
	return cs.call(ctx, MethodResourcesSubscribe, p, nil)
}

// Unsubscribe cancels a Subscribe.
func (cs *ClientSession) Unsubscribe(ctx context.Context, p *UnsubscribeRequestParams) error {
	if cs.modern() {
		return fmt.Errorf("%w: %s (use Listen)", ErrRemovedInModern, MethodResourcesUnsubscribe)
	}
	return cs.call(ctx, MethodResourcesUnsubscribe, p, nil)
}

// ErrRemovedInModern is returned (wrapped) for a method that revision
// 2026-07-28 removed, called on a modern session.
var ErrRemovedInModern = errors.New("mcp: the method does not exist in the modern protocol")

// ListPrompts lists the server's prompts, one page at a time. Prompts
// iterates over every page.
func (cs *ClientSession) ListPrompts(ctx context.Context, p *PaginatedRequestParams) (*ListPromptsResult, error) {
	var res ListPromptsResult
	if err := cs.call(ctx, MethodPromptsList, orEmptyPage(p), &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// GetPrompt gets a prompt, with its arguments filled in.
func (cs *ClientSession) GetPrompt(ctx context.Context, p *GetPromptRequestParams) (*GetPromptResult, error) {
	var res GetPromptResult
	if err := cs.call(ctx, MethodPromptsGet, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Complete asks the server to complete a prompt or resource template
// argument (completion/complete). The server must have declared
// completions.
func (cs *ClientSession) Complete(ctx context.Context, p *CompleteRequestParams) (*CompleteResult, error) {
	var res CompleteResult
	if err := cs.call(ctx, MethodCompletionComplete, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetLoggingLevel asks the server to send log messages at level and above
// (logging/setLevel); ClientOptions.LoggingMessageHandler receives them.
//
// Revision 2026-07-28 removed logging/setLevel: on a modern session the
// level is remembered and sent in the _meta of every later request
// (io.modelcontextprotocol/logLevel), and nothing is sent now.
func (cs *ClientSession) SetLoggingLevel(ctx context.Context, level LoggingLevel) error {
	if cs.modern() {
		if err := level.Validate(); err != nil {
			return err
		}
		cs.mu.Lock()
		cs.logLevel, cs.metaCache = level, nil
		cs.mu.Unlock()
		return nil
	}
	return cs.call(ctx, MethodLoggingSetLevel, &SetLevelRequestParams{Level: level}, nil)
}

func orEmptyPage(p *PaginatedRequestParams) *PaginatedRequestParams {
	if p == nil {
		return &PaginatedRequestParams{}
	}
	return p
}

// ErrCursorLoop is returned (wrapped) by the list iterators when a server
// hands back a cursor it already gave in the same listing, which would
// otherwise make the iteration endless.
var ErrCursorLoop = errors.New("mcp: the server repeated a pagination cursor")

// paginate yields the items of every page that list returns, starting at
// the cursor in p, following NextCursor until a page has none. An error
// is yielded once, with a nil item, and ends the iteration.
func paginate[T any, R any](ctx context.Context, p *PaginatedRequestParams, list func(context.Context, *PaginatedRequestParams) (*R, error), items func(*R) ([]T, Cursor)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		q := PaginatedRequestParams{}
		if p != nil {
			q = *p
		}
		seen := map[Cursor]bool{}
		for {
			page, err := list(ctx, &q)
			if page == nil {
				if err == nil {
					err = errors.New("mcp: empty page")
				}
				yield(nil, err)
				return
			}
			all, next := items(page)
			for i := range all {
				if !yield(&all[i], nil) {
					return
				}
			}
			if err != nil {
				// A page that came with an error (ListTools reports
				// unusable schemas so) still yields its items first.
				yield(nil, err)
				return
			}
			if next == "" {
				return
			}
			if seen[next] {
				yield(nil, fmt.Errorf("%w: %q", ErrCursorLoop, next))
				return
			}
			seen[next] = true
			q.Cursor = next
		}
	}
}

// Tools iterates over the server's tools, following pagination cursors
// from p.Cursor (p may be nil). An error ends the iteration: it is yielded
// with a nil tool. A page whose tool schemas cannot all be compiled (see
// ListTools) yields its tools and then the error.
func (cs *ClientSession) Tools(ctx context.Context, p *PaginatedRequestParams) iter.Seq2[*Tool, error] {
	return paginate(ctx, p, cs.ListTools, func(r *ListToolsResult) ([]Tool, Cursor) { return r.Tools, r.NextCursor })
}

// Resources iterates over the server's resources, following pagination
// cursors. An error ends the iteration: it is yielded with a nil resource.
func (cs *ClientSession) Resources(ctx context.Context, p *PaginatedRequestParams) iter.Seq2[*Resource, error] {
	return paginate(ctx, p, cs.ListResources, func(r *ListResourcesResult) ([]Resource, Cursor) { return r.Resources, r.NextCursor })
}

// ResourceTemplates iterates over the server's resource templates,
// following pagination cursors. An error ends the iteration: it is yielded
// with a nil template.
func (cs *ClientSession) ResourceTemplates(ctx context.Context, p *PaginatedRequestParams) iter.Seq2[*ResourceTemplate, error] {
	return paginate(ctx, p, cs.ListResourceTemplates, func(r *ListResourceTemplatesResult) ([]ResourceTemplate, Cursor) {
		return r.ResourceTemplates, r.NextCursor
	})
}

// Prompts iterates over the server's prompts, following pagination
// cursors. An error ends the iteration: it is yielded with a nil prompt.
func (cs *ClientSession) Prompts(ctx context.Context, p *PaginatedRequestParams) iter.Seq2[*Prompt, error] {
	return paginate(ctx, p, cs.ListPrompts, func(r *ListPromptsResult) ([]Prompt, Cursor) { return r.Prompts, r.NextCursor })
}
