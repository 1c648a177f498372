package jsonrpc

import (
	"errors"
	"io"
	"os"
)

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed)
}
