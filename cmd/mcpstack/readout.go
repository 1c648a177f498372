package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/mcpstack/mcpstack/mcp"
)

// checkOutput checks --output and --force before connecting: they go with
// read only, and an existing file is refused without --force, so that the
// server is not asked for what cannot be written.
func checkOutput(cfg *clientConfig) error {
	switch {
	case cfg.output == "" && cfg.force:
		return usageErrorf("--force goes with --output")
	case cfg.output == "":
		return nil
	case cfg.action != "read":
		return usageErrorf("--output goes with the read action")
	case cfg.force:
		return nil
	}
	if _, err := os.Lstat(cfg.output); err == nil {
		return usageErrorf("%s exists; give --force to replace it", cfg.output)
	}
	return nil
}

// errManyContents reports a resource read that returned several contents:
// --output writes exactly one.
var errManyContents = errors.New("the resource has several contents; --output writes one (use --json to see them all)")

// writeResource writes the one content of res to cfg.output: a blob's
// decoded bytes, or a text's UTF-8. The file is created 0644 (before the
// umask); without --force an existing file is never replaced, even one
// created since checkOutput looked.
func writeResource(cfg *clientConfig, res *mcp.ReadResourceResult, out *printer) error {
	if len(res.Contents) != 1 {
		return errManyContents
	}
	var (
		data []byte
		mime string
	)
	switch c := res.Contents[0].(type) {
	case *mcp.BlobResourceContents:
		data, mime = c.Blob, c.MIMEType
	case *mcp.TextResourceContents:
		data, mime = []byte(c.Text), c.MIMEType
	default:
		return fmt.Errorf("unknown content type %T", c)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if cfg.force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(cfg.output, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return usageErrorf("%s exists; give --force to replace it", cfg.output)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return out.wrote(cfg.output, mime, len(data))
}
