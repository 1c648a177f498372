package icon

import "fmt"

// Reason classifies why an icon was refused. A Reason is an error, so that
// errors.Is(err, ReasonOrigin) reports whether err (or an error it wraps) is
// an [*Error] with that reason.
type Reason string

// The reasons for refusing an icon.
const (
	// ReasonInvalid: malformed metadata (sizes, theme or mimeType).
	ReasonInvalid Reason = "invalid metadata"
	// ReasonScheme: src is not an https URL or a data: URI.
	ReasonScheme Reason = "unsafe scheme"
	// ReasonURL: src is malformed, carries user credentials, or is a data:
	// URI that is not base64 encoded.
	ReasonURL Reason = "malformed source"
	// ReasonOrigin: src is not on the server's origin nor an allowed one.
	ReasonOrigin Reason = "origin not allowed"
	// ReasonRedirect: a redirect changed scheme or origin, went round in a
	// loop, or exceeded the redirect limit.
	ReasonRedirect Reason = "redirect refused"
	// ReasonTooLarge: the body or decoded data exceeds the byte limit.
	ReasonTooLarge Reason = "too large"
	// ReasonDimensions: the image header declares more pixels than allowed.
	ReasonDimensions Reason = "dimensions too large"
	// ReasonFrames: the image is animated with more frames than allowed.
	ReasonFrames Reason = "too many frames"
	// ReasonType: the bytes are not an allowed image type, or their header
	// is corrupt.
	ReasonType Reason = "type not allowed"
	// ReasonTypeMismatch: the declared type (the icon's mimeType, the
	// response Content-Type or the data: media type) disagrees with the type
	// detected from the bytes.
	ReasonTypeMismatch Reason = "type mismatch"
	// ReasonSVG: SVG is not allowed, or the SVG could not be sanitized.
	ReasonSVG Reason = "svg refused"
	// ReasonStatus: the server answered with a status other than 200.
	ReasonStatus Reason = "bad status"
	// ReasonTimeout: the fetch timed out or its context was cancelled.
	ReasonTimeout Reason = "timeout"
	// ReasonNetwork: the request failed for another transport reason.
	ReasonNetwork Reason = "network error"
)

// Error implements the error interface, so that a Reason can be the target
// of errors.Is.
func (r Reason) Error() string { return "icon: " + string(r) }

// Error is a refusal of an icon.
type Error struct {
	// Reason classifies the refusal.
	Reason Reason
	// Field names the icon field at fault ("src", "mimeType", "sizes" or
	// "theme") when the refusal is about the icon's metadata; else empty.
	Field string
	// Detail says what exactly was wrong.
	Detail string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns a message naming the reason, the field and the detail.
func (e *Error) Error() string {
	msg := "icon: " + string(e.Reason)
	if e.Field != "" {
		msg += " (" + e.Field + ")"
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's Reason.
func (e *Error) Is(target error) bool {
	r, ok := target.(Reason)
	return ok && r == e.Reason
}

func refuse(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

func fieldError(r Reason, field, format string, args ...any) *Error {
	return &Error{Reason: r, Field: field, Detail: fmt.Sprintf(format, args...)}
}
