// Package clip shortens what a peer sent before an error message or a log
// line repeats it: a header value may be a megabyte (net/http's default
// header limit) of bytes that quote to four times as many, and a message
// that echoes it whole is neither one readable line nor a bounded answer.
// It imports nothing of the module, so that every layer may use it.
package clip

import (
	"strconv"
	"unicode/utf8"
)

// Max is the number of bytes of a value that Quote keeps: enough for any
// legitimate protocol version, method, tool name or URI prefix to show
// whole.
const Max = 128

// Quote returns s quoted as strconv.Quote does, cut after Max bytes (on a
// rune boundary) with the length of the whole said after it, as in
// "abc"... (1048576 bytes). It is safe for concurrent use.
func Quote(s string) string {
	if len(s) <= Max {
		return strconv.Quote(s)
	}
	cut := Max
	for cut > 0 && cut > Max-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// String returns s cut as Quote cuts it, unquoted: for a value the message
// shows bare.
func String(s string) string {
	if len(s) <= Max {
		return s
	}
	cut := Max
	for cut > 0 && cut > Max-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
