package mcp

import (
	"encoding/json"
	"strings"
)

// Root is a directory or file the client lets servers work in.
type Root struct {
	// URI locates the root; in this revision it must be a file:// URI.
	URI string `json:"uri"`
	// Name is a human-readable name for the root.
	Name string `json:"name,omitempty"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// Validate reports an error unless URI is a file:// URI (MCP 2025-11-25
// client/roots#root).
func (r *Root) Validate() error {
	const typ = "Root"
	if err := checkRequired(typ, "uri", r.URI); err != nil {
		return err
	}
	if len(r.URI) < len("file://") || !strings.EqualFold(r.URI[:len("file://")], "file://") {
		return invalid(typ, "uri", "must be a file:// URI")
	}
	return nil
}

// ListRootsResult is the result of roots/list.
type ListRootsResult struct {
	// Roots are the client's roots; nil encodes as [].
	Roots []Root `json:"roots"`
	// Meta holds protocol and application metadata.
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes r with Roots as [] when nil.
func (r ListRootsResult) MarshalJSON() ([]byte, error) {
	type wire ListRootsResult
	w := wire(r)
	if w.Roots == nil {
		w.Roots = []Root{}
	}
	return json.Marshal(w)
}

// Validate checks each root.
func (r *ListRootsResult) Validate() error {
	for i := range r.Roots {
		if err := r.Roots[i].Validate(); err != nil {
			return inField("ListRootsResult", indexed("roots", i), err)
		}
	}
	return nil
}
