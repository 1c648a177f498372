package mcphttp

import "github.com/mcpstack/mcpstack/jsonrpc"

// requestStreams maps the ids of a session's requests in flight to the
// streams that carry their messages. Most sessions have a few requests in
// flight at a time and none while idle, so the ids are kept in a slice,
// searched linearly, that stays small once emptied; a map takes over when
// many are in flight. The zero value is empty and ready to use; the
// session's mu guards it.
type requestStreams struct {
	list  []requestStream
	m     map[jsonrpc.ID]*outStream // instead of list, once it has grown past maxLinearRequests
	list1 [1]requestStream          // the first backing array of list: one request at a time needs no other
}

type requestStream struct {
	id jsonrpc.ID
	st *outStream
}

// maxLinearRequests is how many requests in flight are searched linearly.
const maxLinearRequests = 32

func (rs *requestStreams) len() int {
	if rs.m != nil {
		return len(rs.m)
	}
	return len(rs.list)
}

// get returns the stream of id, or nil.
func (rs *requestStreams) get(id jsonrpc.ID) *outStream {
	if rs.m != nil {
		return rs.m[id]
	}
	for _, r := range rs.list {
		if r.id == id {
			return r.st
		}
	}
	return nil
}

// put maps id to st; id must not be mapped already.
func (rs *requestStreams) put(id jsonrpc.ID, st *outStream) {
	if rs.m == nil && len(rs.list) >= maxLinearRequests {
		rs.m = make(map[jsonrpc.ID]*outStream, 2*maxLinearRequests)
		for _, r := range rs.list {
			rs.m[r.id] = r.st
		}
		rs.list = nil
	}
	if rs.m != nil {
		rs.m[id] = st
		return
	}
	if rs.list == nil {
		rs.list = rs.list1[:0]
	}
	full := len(rs.list) == cap(rs.list)
	rs.list = append(rs.list, requestStream{id, st})
	if full { // list has left list1, if it was there: keep no stale copy
		rs.list1 = [1]requestStream{}
	}
}

// remove unmaps id if it maps to st, or whatever it maps to if st is nil,
// and returns the stream it mapped to, or nil.
func (rs *requestStreams) remove(id jsonrpc.ID, st *outStream) *outStream {
	if rs.m != nil {
		got := rs.m[id]
		if got != nil && (st == nil || got == st) {
			delete(rs.m, id)
			return got
		}
		return nil
	}
	for i, r := range rs.list {
		if r.id == id {
			if st != nil && r.st != st {
				return nil
			}
			last := len(rs.list) - 1
			rs.list[i] = rs.list[last]
			rs.list[last] = requestStream{}
			rs.list = rs.list[:last]
			return r.st
		}
	}
	return nil
}

// appendStreams appends the streams of the requests to dst.
func (rs *requestStreams) appendStreams(dst []*outStream) []*outStream {
	for _, st := range rs.m {
		dst = append(dst, st)
	}
	for _, r := range rs.list {
		dst = append(dst, r.st)
	}
	return dst
}
