// Package jsonfast holds the hot loops of the project's JSON code: finding
// the bytes of a JSON string that need attention eight at a time (SWAR:
// SIMD within a register, on uint64 words), unquoting string literals as
// encoding/json does, and escaping strings exactly as encoding/json does.
// jsonrpc, jsonschema and mcp share it so that a large string argument is
// crossed in word-sized steps wherever it goes.
//
// Every function here is defined by the byte-at-a-time code it replaces;
// the tests compare them with that code and with encoding/json.
package jsonfast

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

const (
	lsb = 0x0101010101010101 // the low bit of every byte
	msb = 0x8080808080808080 // the high bit of every byte
)

// The masks below set the high bit of the bytes of a little-endian word
// that meet a condition. Borrows can also set it in bytes above (later
// than) the first byte that truly meets the condition, never below, so the
// lowest set bit always marks the first such byte, which is all the
// callers use.

// zeroBytes marks the bytes of x that are 0.
func zeroBytes(x uint64) uint64 { return (x - lsb) & ^x & msb }

// eqBytes marks the bytes of x equal to c.
func eqBytes(x uint64, c byte) uint64 { return zeroBytes(x ^ (lsb * uint64(c))) }

// first returns the index of the first marked byte of a nonzero mask.
func first(mask uint64) int { return bits.TrailingZeros64(mask) >> 3 }

// IndexSpecial returns the index of the first byte of s that ends the plain
// part of a JSON string literal's body: '"', '\\' or a control character
// (below 0x20). It returns len(s) if there is none.
func IndexSpecial(s []byte) int {
	// The first 64 bytes go a word at a time, which is quickest when
	// escapes are dense. Beyond, long plain runs go window by window:
	// '"' and '\\' are found with bytes.IndexByte (vector instructions),
	// control characters a word at a time with one comparison. Windows
	// start small and double, so that the look-ahead past the next
	// special byte stays proportionate to the plain run before it.
	const prelude = 64
	if len(s) <= prelude {
		return indexSpecialWords(s)
	}
	if i := indexSpecialWords(s[:prelude]); i < prelude {
		return i
	}
	i, window := prelude, 256
	for i < len(s) {
		w := s[i:min(len(s), i+window)]
		n := len(w)
		if j := bytes.IndexByte(w, '"'); j >= 0 {
			n = j
		}
		if j := bytes.IndexByte(w[:n], '\\'); j >= 0 {
			n = j
		}
		if j := indexControl(w[:n]); j < n {
			return i + j
		}
		if n < len(w) {
			return i + n
		}
		i += len(w)
		window = min(2*window, 4096)
	}
	return len(s)
}

// indexControl returns the index of the first byte of s below 0x20, or
// len(s).
func indexControl(s []byte) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w[0:8]), binary.LittleEndian.Uint64(w[8:16])
		x2, x3 := binary.LittleEndian.Uint64(w[16:24]), binary.LittleEndian.Uint64(w[24:32])
		if ((x0-lsb*0x20)&^x0|(x1-lsb*0x20)&^x1|(x2-lsb*0x20)&^x2|(x3-lsb*0x20)&^x3)&msb != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 {
			return i
		}
	}
	return len(s)
}

// indexSpecialWords is IndexSpecial for short inputs, a word at a time.
func indexSpecialWords(s []byte) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w[0:8]), binary.LittleEndian.Uint64(w[8:16])
		x2, x3 := binary.LittleEndian.Uint64(w[16:24]), binary.LittleEndian.Uint64(w[24:32])
		if specialBytes(x0)|specialBytes(x1)|specialBytes(x2)|specialBytes(x3) != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := specialBytes(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + first(m)
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return len(s)
}

// specialBytes marks the bytes of x that are '"', '\\' or below 0x20.
func specialBytes(x uint64) uint64 {
	q := x ^ (lsb * '"')
	bs := x ^ (lsb * '\\')
	return ((x-lsb*0x20) & ^x | (q-lsb) & ^q | (bs-lsb) & ^bs) & msb
}

// htmlBytes marks the bytes of x that encoding/json's HTML-escaping
// string encoder does not copy as they are: those of specialOrHighBytes,
// and '<', '>' and '&'. '<' and '>' differ only in bit 1, and '"' and '&'
// only in bit 2, so each pair is found with one comparison.
func htmlBytes(x uint64) uint64 {
	return ((x - lsb*0x20) | x | zeroes(x^(lsb*'\\')) |
		zeroes((x&^(lsb*0x04))^(lsb*'"')) | zeroes((x&^(lsb*0x02))^(lsb*'<'))) & msb
}

// specialOrHighBytes marks the bytes of x that are '"', '\\', below 0x20,
// or 0x80 and above. (x - 0x20 in each byte has its high bit set for bytes
// below 0x20, and for none of 0x20 to 0x7F.)
func specialOrHighBytes(x uint64) uint64 {
	return ((x - lsb*0x20) | x | zeroes(x^(lsb*'\\')) | zeroes(x^(lsb*'"'))) & msb
}

// zeroes is zeroBytes without the final mask, for callers that apply it.
func zeroes(t uint64) uint64 { return (t - lsb) & ^t }

// IndexSpecialOrHigh is IndexSpecial that also stops at bytes of 0x80 and
// above (the bytes of multi-byte UTF-8 sequences, or invalid UTF-8).
func IndexSpecialOrHigh(s []byte) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w[0:8]), binary.LittleEndian.Uint64(w[8:16])
		x2, x3 := binary.LittleEndian.Uint64(w[16:24]), binary.LittleEndian.Uint64(w[24:32])
		if specialOrHighBytes(x0)|specialOrHighBytes(x1)|specialOrHighBytes(x2)|specialOrHighBytes(x3) != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := specialOrHighBytes(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + first(m)
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

// indexHTMLUnsafe returns the index of the first byte of s that
// encoding/json's HTML-escaping string encoder does not copy as it is:
// '"', '\\', '<', '>', '&', a control character, or a byte of 0x80 and
// above. It returns len(s) if there is none.
func indexHTMLUnsafe(str string) int {
	s := bytesOf(str)
	// As IndexSpecial: words first, then windows searched with
	// bytes.IndexByte for each ASCII byte to escape, and a word at a time
	// for control characters and bytes of 0x80 and above.
	const prelude = 64
	if len(s) <= prelude {
		return indexHTMLUnsafeWords(s)
	}
	if i := indexHTMLUnsafeWords(s[:prelude]); i < prelude {
		return i
	}
	i, window := prelude, 256
	for i < len(s) {
		w := s[i:min(len(s), i+window)]
		n := len(w)
		for _, c := range [...]byte{'"', '\\', '<', '>', '&'} {
			if j := bytes.IndexByte(w[:n], c); j >= 0 {
				n = j
			}
		}
		if j := indexControlOrHigh(w[:n]); j < n {
			return i + j
		}
		if n < len(w) {
			return i + n
		}
		i += len(w)
		window = min(2*window, 4096)
	}
	return len(s)
}

// indexControlOrHigh returns the index of the first byte of s below 0x20
// or of 0x80 and above, or len(s).
func indexControlOrHigh(s []byte) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w[0:8]), binary.LittleEndian.Uint64(w[8:16])
		x2, x3 := binary.LittleEndian.Uint64(w[16:24]), binary.LittleEndian.Uint64(w[24:32])
		if ((x0-lsb*0x20)|x0|(x1-lsb*0x20)|x1|(x2-lsb*0x20)|x2|(x3-lsb*0x20)|x3)&msb != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

// indexHTMLUnsafeWords is indexHTMLUnsafe a word at a time.
func indexHTMLUnsafeWords(s []byte) int {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		w := s[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w[0:8]), binary.LittleEndian.Uint64(w[8:16])
		x2, x3 := binary.LittleEndian.Uint64(w[16:24]), binary.LittleEndian.Uint64(w[24:32])
		if htmlBytes(x0)|htmlBytes(x1)|htmlBytes(x2)|htmlBytes(x3) != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := htmlBytes(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + first(m)
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			return i
		}
	}
	return len(s)
}

// IndexSpecialOrHighString is IndexSpecialOrHigh for a string.
func IndexSpecialOrHighString(s string) int { return IndexSpecialOrHigh(bytesOf(s)) }

// bytesOf returns the bytes of s without copying them; they must not be
// modified.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// ScanString checks the JSON string literal that starts at data[i] (a '"')
// and returns the index just past its closing quote and whether it holds
// escapes. ok is false if the literal is malformed: unterminated, with a
// control character or a bad escape. Bytes of 0x80 and above are not
// checked (invalid UTF-8 passes, as encoding/json lets it).
func ScanString(data []byte, i int) (end int, escaped, ok bool) {
	i++
	for {
		i += IndexSpecial(data[i:])
		if i >= len(data) {
			return i, escaped, false
		}
		switch data[i] {
		case '"':
			return i + 1, escaped, true
		case '\\':
			escaped = true
			if i+1 >= len(data) {
				return i, escaped, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return i, escaped, false
				}
				for _, h := range data[i+2 : i+6] {
					if !isHex(h) {
						return i, escaped, false
					}
				}
				i += 6
			default:
				return i, escaped, false
			}
		default: // a control character
			return i, escaped, false
		}
	}
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// Unquote returns the value of the JSON string literal s (quotes included),
// which ScanString accepted and found escaped or not, exactly as
// encoding/json decodes it: invalid UTF-8 and unpaired surrogate escapes
// become U+FFFD.
func Unquote(s []byte, escaped bool) string {
	s = s[1 : len(s)-1]
	if !escaped && utf8.Valid(s) {
		return string(s)
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		j := IndexSpecialOrHigh(s[i:])
		b = append(b, s[i:i+j]...)
		i += j
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		// c is '\\': ScanString admits no other special byte.
		switch s[i+1] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(s[i+2 : i+6])
			i += 6
			if 0xD800 <= r && r < 0xE000 {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2 := hex4(s[i+2 : i+6]); r < 0xDC00 && 0xDC00 <= r2 && r2 < 0xE000 {
						b = utf8.AppendRune(b, (r-0xD800)<<10+(r2-0xDC00)+0x10000)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
			continue
		default: // '"', '\\', '/'
			b = append(b, s[i+1])
		}
		i += 2
	}
	return string(b)
}

func hex4(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal exactly as
// encoding/json.Marshal encodes a string: '<', '>' and '&' escaped as
// \u003c, \u003e and \u0026, U+2028 and U+2029 escaped, invalid UTF-8
// replaced by \ufffd.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for {
		i := indexHTMLUnsafe(s)
		dst = append(dst, s[:i]...)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			s = s[i+1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		s = s[i+size:]
	}
	return append(dst, '"')
}

// NeedsCompact reports whether raw holds a byte that encoding/json's
// compaction of a json.RawMessage (json.Marshal of a RawMessage, or of a
// struct field holding one) might change: JSON whitespace, '<', '>', '&'
// (escaped in strings) or 0xE2 (the first byte of U+2028 and U+2029, also
// escaped). A valid JSON value without any of them is encoded as it is.
func NeedsCompact(raw []byte) bool {
	i := 0
	for ; i+8 <= len(raw); i += 8 {
		x := binary.LittleEndian.Uint64(raw[i:])
		m := eqBytes(x, ' ') | eqBytes(x, '\t') | eqBytes(x, '\n') | eqBytes(x, '\r') |
			eqBytes(x, '<') | eqBytes(x, '>') | eqBytes(x, '&') | eqBytes(x, 0xE2)
		if m != 0 {
			return true
		}
	}
	for ; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return true
		}
	}
	return false
}
