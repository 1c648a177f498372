package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Subscription is a stream of change notifications opened by
// ClientSession.Listen. The notifications reach the handlers of
// ClientOptions (ToolListChangedHandler, PromptListChangedHandler,
// ResourceListChangedHandler, ResourceUpdatedHandler), whichever era the
// server speaks. Its methods are safe for concurrent use.
type Subscription struct {
	cs    *ClientSession
	acked SubscriptionFilter
	// modern: the subscriptions/listen request, cancelled by Close.
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done is closed
	// legacy: the URIs subscribed with resources/subscribe.
	uris      []string
	closeOnce sync.Once
}

// Acknowledged returns the notifications the server agreed to send: the
// filter asked for, less what the server does not support.
func (s *Subscription) Acknowledged() SubscriptionFilter { return s.acked }

// Done is closed when the subscription has ended: closed, or, for a
// modern server, its stream ended (then Err says why; re-listen and
// re-fetch what may have changed, as the revision asks, since
// notifications are not redelivered).
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err returns why a modern subscription's stream ended, once Done is
// closed; nil after Close or a graceful end.
func (s *Subscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the subscription: a modern server's stream is closed (over
// HTTP) or its request cancelled (stdio); a legacy server is sent
// resources/unsubscribe for each URI. It waits for the stream to end, and
// for the unsubscriptions until ctx ends.
func (s *Subscription) Close(ctx context.Context) error {
	var errs []error
	s.closeOnce.Do(func() {
		if s.cancel != nil {
			s.cancel()
			select {
			case <-s.done:
			case <-ctx.Done():
				errs = append(errs, ctx.Err())
			}
			return
		}
		for _, u := range s.uris {
			if err := s.cs.call(ctx, MethodResourcesUnsubscribe, &UnsubscribeRequestParams{URI: u}, nil); err != nil {
				errs = append(errs, err)
			}
		}
		close(s.done)
	})
	return errors.Join(errs...)
}

// listenIDKey is the context key of the JSON-RPC id a request must use
// (subscriptions/listen: notifications are tagged with it).
type listenIDKey struct{}

// Listen asks the server for the change notifications f names, with one
// API for both eras. Against a modern server it sends
// subscriptions/listen, which holds a stream open until Close, and returns
// once the server acknowledged it (basic/patterns/subscriptions). Against
// a legacy server it sends resources/subscribe for each URI of
// f.ResourceSubscriptions; list changes arrive without asking there (on
// the GET stream over HTTP), when the server declared listChanged.
// Acknowledged says what the server will send.
func (cs *ClientSession) Listen(ctx context.Context, f SubscriptionFilter) (*Subscription, error) {
	if cs.modern() {
		return cs.listenModern(ctx, f)
	}
	return cs.listenLegacy(ctx, f)
}

// listenLegacy subscribes to f's resources and reports what the server's
// capabilities promise.
func (cs *ClientSession) listenLegacy(ctx context.Context, f SubscriptionFilter) (*Subscription, error) {
	s := &Subscription{cs: cs, done: make(chan struct{})}
	var caps ServerCapabilities
	if r := cs.InitializeResult(); r != nil {
		caps = r.Capabilities
	}
	s.acked.ToolsListChanged = f.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	s.acked.PromptsListChanged = f.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	s.acked.ResourcesListChanged = f.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if len(f.ResourceSubscriptions) > 0 && caps.Resources != nil && caps.Resources.Subscribe {
		for _, u := range f.ResourceSubscriptions {
			if err := cs.call(ctx, MethodResourcesSubscribe, &SubscribeRequestParams{URI: u}, nil); err != nil {
				_ = s.Close(context.WithoutCancel(ctx))
				return nil, fmt.Errorf("mcp: listen: %w", err)
			}
			s.uris = append(s.uris, u)
		}
		s.acked.ResourceSubscriptions = slices.Clone(s.uris)
	}
	return s, nil
}

// listenModern sends subscriptions/listen and waits for its
// acknowledgement.
func (cs *ClientSession) listenModern(ctx context.Context, f SubscriptionFilter) (*Subscription, error) {
	id := cs.conn.NewID()
	ack := make(chan SubscriptionFilter, 1)
	cs.mu.Lock()
	if cs.listens == nil {
		cs.listens = make(map[jsonrpc.ID]chan SubscriptionFilter)
	}
	cs.listens[id] = ack
	cs.mu.Unlock()
	forget := func() {
		cs.mu.Lock()
		delete(cs.listens, id)
		cs.mu.Unlock()
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Subscription{cs: cs, cancel: cancel, done: make(chan struct{})}
	filter := f
	go func() {
		defer close(s.done)
		defer forget()
		var res json.RawMessage
		err := cs.send(context.WithValue(lctx, listenIDKey{}, id), MethodSubscriptionsListen, &SubscriptionsListenRequestParams{Notifications: &filter}, &res)
		if lctx.Err() == nil {
			s.err = err
		}
	}()
	select {
	case a := <-ack:
		s.acked = a
		return s, nil
	case <-s.done:
		if s.err == nil {
			s.err = errors.New("mcp: the listen stream ended before it was acknowledged")
		}
		return nil, fmt.Errorf("mcp: listen: %w", s.err)
	case <-ctx.Done():
		cancel()
		<-s.done
		return nil, fmt.Errorf("mcp: listen: %w", ctx.Err())
	}
}

// subscriptionAcknowledged handles notifications/subscriptions/acknowledged:
// the Listen waiting for it learns the filter the server honours.
func (cs *ClientSession) subscriptionAcknowledged(_ context.Context, params json.RawMessage) {
	var p SubscriptionsAcknowledgedNotificationParams
	if err := parseParams(params, &p); err != nil {
		cs.client.log.Debug("mcp: malformed subscription acknowledgement ignored", "error", err)
		return
	}
	id, ok := p.Meta.SubscriptionID()
	if !ok {
		return
	}
	cs.mu.Lock()
	ch := cs.listens[id]
	cs.mu.Unlock()
	if ch != nil {
		select {
		case ch <- p.Notifications:
		default: // acknowledged twice: the first counts
		}
	}
}
