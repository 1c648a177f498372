package mcp

import (
	"errors"
	"fmt"
)

// ErrInvalidToolName is matched (with errors.Is) by the error ValidToolName
// and Server.AddTool return for a name that breaks the tool-name rules.
var ErrInvalidToolName = errors.New("mcp: invalid tool name")

// MaxToolNameLength is the longest tool name allowed.
const MaxToolNameLength = 128

// ValidToolName checks name against the tool-name rules: 1 to 128
// characters, each an ASCII letter or digit, '_', '-' or '.'. Names are
// case-sensitive.
func ValidToolName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidToolName)
	}
	if len(name) > MaxToolNameLength {
		return fmt.Errorf("%w: %d characters; at most %d are allowed", ErrInvalidToolName, len(name), MaxToolNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return fmt.Errorf("%w: %q has the character %q at byte %d; only A-Z, a-z, 0-9, '_', '-' and '.' are allowed", ErrInvalidToolName, name, rune(c), i)
		}
	}
	return nil
}
