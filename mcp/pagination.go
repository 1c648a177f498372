package mcp

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// Pagination of the server's lists (tools, resources, resource templates,
// prompts). With ServerOptions.PageSize zero every list is answered in one
// page. Otherwise each page holds at most PageSize items and, unless it is
// the last, a nextCursor. A cursor is opaque to the client: it is the
// base64url encoding of the list's kind and the offset of the next item,
// so a cursor of one list is refused by another, and a cursor that does not
// decode, names another list or points past the end gets -32602.
//
// MCP 2025-11-25 server/utilities/pagination#implementation-guidelines: the
// server chooses the page size, and cursors are opaque to the client;
// server/utilities/pagination#error-handling: an invalid cursor is -32602.

// encodeCursor returns the cursor of the page of kind that starts at off.
func encodeCursor(kind string, off int) Cursor {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + strconv.Itoa(off)))
}

// decodeCursor returns the offset a cursor of kind points at; the empty
// cursor is offset 0.
func decodeCursor(kind string, c Cursor) (int, error) {
	if c == "" {
		return 0, nil
	}
	bad := jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: invalid cursor %s", clip.Quote(c))
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, bad
	}
	k, n, ok := strings.Cut(string(b), ":")
	if !ok || k != kind {
		return 0, bad
	}
	off, err := strconv.Atoi(n)
	if err != nil || off <= 0 || strconv.Itoa(off) != n {
		return 0, bad
	}
	return off, nil
}

// page returns the items of the page that cursor c selects among all, and
// the cursor of the next page ("" at the end). size <= 0 means one page.
func page[T any](kind string, all []T, c Cursor, size int) ([]T, Cursor, error) {
	off, err := decodeCursor(kind, c)
	if err != nil {
		return nil, "", err
	}
	if off > len(all) {
		return nil, "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: cursor %s is past the end of the list", clip.Quote(c))
	}
	rest := all[off:]
	if size <= 0 || len(rest) <= size {
		return rest, "", nil
	}
	return rest[:size], encodeCursor(kind, off+size), nil
}
