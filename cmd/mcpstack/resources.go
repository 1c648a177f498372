package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/mcp"
)

// maxListedFiles bounds the files that resources/list shows; the others
// are still readable through the resource template.
const maxListedFiles = 100

// fileResources offers the files under root as resources: those found at
// start in resources/list, any file through the template
// file://ROOT/{+path}, and notifications/resources/updated when a listed
// file changes (checked every pollInterval while the server runs).
type fileResources struct {
	root   string // absolute, as a slash path in URIs
	prefix string // the URI of root, ending in "/"
	listed []string
}

func newFileResources(root string) *fileResources {
	u := &url.URL{Scheme: "file", Path: filepath.ToSlash(root)}
	prefix := u.String()
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return &fileResources{root: root, prefix: prefix}
}

// uri returns the URI of the file at rel, a slash path under the root.
func (fr *fileResources) uri(rel string) string {
	return fr.prefix + (&url.URL{Path: rel}).EscapedPath()
}

// rel returns the path under the root that uri names.
func (fr *fileResources) rel(uri string) (string, bool) {
	if !strings.HasPrefix(uri, fr.prefix) {
		return "", false
	}
	p, err := url.PathUnescape(strings.TrimPrefix(uri, fr.prefix))
	if err != nil || !fs.ValidPath(p) || strings.Contains(p, `\`) {
		return "", false
	}
	return p, true
}

// register adds the resources and the template to s.
func (fr *fileResources) register(s *mcp.Server) error {
	r, err := os.OpenRoot(fr.root)
	if err != nil {
		return err
	}
	defer r.Close()
	errStop := fmt.Errorf("enough files")
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable directories are left out
		}
		if d.IsDir() && p != "." && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
			fr.listed = append(fr.listed, p)
			if len(fr.listed) == maxListedFiles {
				return errStop
			}
		}
		return nil
	})
	if err != nil && err != errStop {
		return err
	}
	for _, p := range fr.listed {
		res := &mcp.Resource{URI: fr.uri(p), Name: p, MIMEType: mimeType(p)}
		if err := s.AddResource(res, fr.read); err != nil {
			return fmt.Errorf("resource %s: %w", p, err)
		}
	}
	return s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: fr.prefix + "{+path}",
		Name:        "file",
		Title:       "A file under the server's root",
		Description: "Any file under " + fr.root + " (1 MiB at most)",
	}, fr.read)
}

func mimeType(p string) string {
	if mt := mime.TypeByExtension(path.Ext(p)); mt != "" {
		return mt
	}
	return ""
}

// read answers resources/read for a file under the root.
func (fr *fileResources) read(ctx context.Context, ss *mcp.ServerSession, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	rel, ok := fr.rel(p.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(p.URI)
	}
	r, err := os.OpenRoot(fr.root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(p.URI)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, mcp.ResourceNotFoundError(p.URI)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", rel, maxFileBytes)
	}
	mt := mimeType(rel)
	if utf8.Valid(data) {
		if mt == "" {
			mt = "text/plain"
		}
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, MIMEType: mt, Text: string(data)}}}, nil
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.BlobResourceContents{URI: p.URI, MIMEType: mt, Blob: data}}}, nil
}

// watch calls s.ResourceUpdated for a listed file whose size or time
// changes, every interval until ctx is done. The server sends the
// notification only to the sessions that subscribed to the file. If
// announce is set, a change is announced only if announce says so for
// that version of the file (replicas watching one directory announce each
// change once between them; see serve_redis.go).
func (fr *fileResources) watch(ctx context.Context, s *mcp.Server, interval time.Duration, announce func(ctx context.Context, uri, version string) bool) {
	type stamp struct {
		size int64
		mod  time.Time
		ok   bool
	}
	look := func(r *os.Root, p string) stamp {
		fi, err := r.Stat(p)
		if err != nil {
			return stamp{}
		}
		return stamp{fi.Size(), fi.ModTime(), true}
	}
	r, err := os.OpenRoot(fr.root)
	if err != nil {
		return
	}
	defer r.Close()
	last := make(map[string]stamp, len(fr.listed))
	for _, p := range fr.listed {
		last[p] = look(r, p)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, p := range fr.listed {
			if now := look(r, p); now != last[p] {
				last[p] = now
				uri := fr.uri(p)
				if announce == nil || announce(ctx, uri, fmt.Sprintf("%t %d %d", now.ok, now.size, now.mod.UnixNano())) {
					_ = s.ResourceUpdated(ctx, uri)
				}
			}
		}
	}
}

// completePaths returns the listed files whose path starts with prefix.
func (fr *fileResources) completePaths(prefix string) []string {
	var out []string
	for _, p := range fr.listed {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
