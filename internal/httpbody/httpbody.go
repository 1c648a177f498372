// Package httpbody reads the body of an HTTP response fetched under a
// deadline, and accepts it only when it ended cleanly, within its limit,
// before the deadline.
//
// A body cut by the request's context (a deadline or a cancellation) does
// not always surface as a read error: depending on where the transport
// notices the cut, a chunked body can end in a clean io.EOF right after the
// bytes read so far. A caller that trusts io.ReadAll's nil error then
// accepts a truncated document (#16.6). [Read] checks the context after the
// read, which is the only signal that cannot be lost.
package httpbody

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrTooLarge reports a body longer than the limit given to [Read].
var ErrTooLarge = errors.New("response body over the limit")

// ErrCut reports a body that did not end cleanly: the read failed, or the
// request's context ended before or while the body was read. The error
// returned by [Read] also wraps the cause (such as
// context.DeadlineExceeded), so that callers can tell a timeout apart.
var ErrCut = errors.New("response body cut short")

// Read reads resp.Body to its end and returns it. ctx is the context of the
// request that produced resp.
//
// It fails with an error wrapping [ErrCut] when the read fails or when ctx,
// or the context of resp.Request (which carries http.Client.Timeout), ended
// by the time the body was read, whatever the read returned; and with an
// error wrapping [ErrTooLarge], after reading at most limit+1 bytes, when the
// body holds more than limit bytes, returning then its first limit bytes for
// callers that show a truncated body as such. Read does not close the body.
// It blocks until the body ends, fails or exceeds the limit; the transport
// ends the read when the request's context ends.
func Read(ctx context.Context, resp *http.Response, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if cause := ended(ctx, resp); cause != nil {
		return nil, fmt.Errorf("%w: %w", ErrCut, cause)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCut, err)
	}
	if int64(len(data)) > limit {
		return data[:limit], fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}

// ended returns the cause of the end of ctx or of resp.Request's context,
// or nil when both are still live.
func ended(ctx context.Context, resp *http.Response) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if resp.Request != nil {
		if rc := resp.Request.Context(); rc.Err() != nil {
			return context.Cause(rc)
		}
	}
	return nil
}
