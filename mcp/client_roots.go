package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ErrInvalidRoot is returned (wrapped) by Client.AddRoots for a root that
// is not a clean file:// URI.
var ErrInvalidRoot = errors.New("mcp: invalid root")

// checkRoot refuses roots that are not file:// URIs (MCP 2025-11-25
// client/roots#root: a root's uri must be a file:// URI), that cannot be
// parsed, or whose path climbs with "." or ".." segments (even
// percent-encoded), so that a root never names more than it seems to.
func checkRoot(r *Root) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidRoot, err)
	}
	u, err := url.Parse(r.URI)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrInvalidRoot, r.URI, err)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%w: %q: a root has no query, fragment or user", ErrInvalidRoot, r.URI)
	}
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." || strings.ContainsRune(seg, 0) {
			return fmt.Errorf("%w: %q: dot segments are not allowed", ErrInvalidRoot, r.URI)
		}
	}
	return nil
}

// upsertRoot adds r to roots, replacing a root with the same URI in place.
func upsertRoot(roots []Root, r Root) []Root {
	if i := slices.IndexFunc(roots, func(x Root) bool { return x.URI == r.URI }); i >= 0 {
		roots[i] = r
		return roots
	}
	return append(roots, r)
}

// Roots returns a copy of the client's roots, in the order they were added.
func (c *Client) Roots() []Root {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.roots)
}

// AddRoots adds roots, replacing those with the same URI. Each must be a
// file:// URI without dot segments, query or fragment; if one is not,
// AddRoots returns an error wrapping ErrInvalidRoot and changes nothing.
// Running sessions are told with notifications/roots/list_changed.
func (c *Client) AddRoots(roots ...*Root) error {
	for _, r := range roots {
		if r == nil {
			return fmt.Errorf("%w: nil", ErrInvalidRoot)
		}
		if err := checkRoot(r); err != nil {
			return err
		}
	}
	c.mu.Lock()
	for _, r := range roots {
		c.roots = upsertRoot(c.roots, *r)
	}
	c.mu.Unlock()
	if len(roots) > 0 {
		c.rootsChanged()
	}
	return nil
}

// RemoveRoots removes the roots with the given URIs. If any was removed,
// running sessions are told with notifications/roots/list_changed.
func (c *Client) RemoveRoots(uris ...string) {
	c.mu.Lock()
	n := len(c.roots)
	c.roots = slices.DeleteFunc(c.roots, func(r Root) bool { return slices.Contains(uris, r.URI) })
	changed := len(c.roots) != n
	c.mu.Unlock()
	if changed {
		c.rootsChanged()
	}
}

// rootsChanged tells every running session that the roots changed (MCP
// 2025-11-25 client/roots#root-list-changes), unless the client declares
// no roots.
func (c *Client) rootsChanged() {
	if c.opts.DisableRoots {
		return
	}
	c.mu.Lock()
	sessions := make([]*ClientSession, 0, len(c.sessions))
	for cs := range c.sessions {
		sessions = append(sessions, cs)
	}
	c.mu.Unlock()
	for _, cs := range sessions {
		if cs.modern() {
			// Revision 2026-07-28 removed the notification: a modern
			// server asks for the roots (in an InputRequiredResult) when
			// it needs them, and gets the current list.
			continue
		}
		if err := cs.Notify(context.Background(), NotificationRootsListChanged, nil); err != nil {
			c.log.Debug("mcp: roots list_changed not sent", "error", err)
		}
	}
}
