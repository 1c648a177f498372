package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// These tests check that a LineStream over a reader with read deadlines
// can give up a read when its context ends, and loses nothing by it.

// deadlinePipe returns the read and write ends of a pipe whose reader has
// read deadlines, by name.
func deadlinePipes() []struct {
	name string
	pipe func(t *testing.T) (io.Reader, io.Writer)
} {
	return []struct {
		name string
		pipe func(t *testing.T) (io.Reader, io.Writer)
	}{
		{"os.Pipe", func(t *testing.T) (io.Reader, io.Writer) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return r, w
		}},
		{"net.Pipe", func(t *testing.T) (io.Reader, io.Writer) {
			r, w := net.Pipe()
			t.Cleanup(func() { r.Close(); w.Close() })
			return r, w
		}},
	}
}

func TestLineStreamInterruptible(t *testing.T) {
	regular, err := os.CreateTemp(t.TempDir(), "lines")
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	ior, iow := io.Pipe()
	defer iow.Close()
	tests := []struct {
		name string
		r    func(t *testing.T) io.Reader
		want bool
	}{
		{"io.Pipe", func(*testing.T) io.Reader { return ior }, false},
		{"strings.Reader", func(*testing.T) io.Reader { return strings.NewReader("") }, false},
		{"regular file", func(*testing.T) io.Reader { return regular }, false}, // not pollable
	}
	for _, p := range deadlinePipes() {
		tests = append(tests, struct {
			name string
			r    func(t *testing.T) io.Reader
			want bool
		}{p.name, func(t *testing.T) io.Reader { r, _ := p.pipe(t); return r }, true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Stream = NewLineStream(tt.r(t), io.Discard, nil, 0)
			is, ok := s.(interruptibleStream)
			if !ok {
				t.Fatal("LineStream is not an interruptibleStream")
			}
			if got := is.interruptible(); got != tt.want {
				t.Errorf("interruptible() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLineStreamInterruptMidLine interrupts reads while the line they
// read is incomplete, several times per line, then lets it complete: the
// message must come whole, and the next one too.
func TestLineStreamInterruptMidLine(t *testing.T) {
	const maxSize = 200 << 10
	big := strings.Repeat("x", 100<<10) // more than the reader's buffer
	tests := []struct {
		name  string
		line  string // written in two parts, split at cut
		cut   int    // -1: before the newline
		want  string // the params of the message, or "" for a DecodeError
		blank bool   // blank lines before
	}{
		{"short", `{"jsonrpc":"2.0","method":"m","params":{"a":1}}`, 20, `{"a":1}`, false},
		{"cut before the first byte", `{"jsonrpc":"2.0","method":"m","params":{"a":2}}`, 0, `{"a":2}`, false},
		{"cut before the newline", `{"jsonrpc":"2.0","method":"m","params":{"a":3}}`, -1, `{"a":3}`, false},
		{"after blank lines", `{"jsonrpc":"2.0","method":"m","params":{"a":4}}`, 10, `{"a":4}`, true},
		{"longer than the buffer", `{"jsonrpc":"2.0","method":"m","params":{"s":"` + big + `"}}`, 90 << 10, `{"s":"` + big + `"}`, false},
		{"too long, cut early", `{"jsonrpc":"2.0","method":"m","params":{"s":"` + big + big + big + `"}}`, 10, "", false},
		{"too long, cut late", `{"jsonrpc":"2.0","method":"m","params":{"s":"` + big + big + big + `"}}`, 250 << 10, "", false},
	}
	next := `{"jsonrpc":"2.0","method":"next"}`
	for _, p := range deadlinePipes() {
		for _, tt := range tests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				r, w := p.pipe(t)
				s := NewLineStream(r, io.Discard, nil, maxSize)
				cut := tt.cut
				if cut < 0 {
					cut = len(tt.line)
				}
				first := tt.line[:cut]
				if tt.blank {
					first = "\n  \r\n" + first
				}
				resume := make(chan struct{})
				wrote := make(chan error, 1)
				go func() {
					// Writes block until read, on net.Pipe always.
					if first != "" {
						if _, err := io.WriteString(w, first); err != nil {
							wrote <- err
							return
						}
					}
					<-resume
					_, err := io.WriteString(w, tt.line[cut:]+"\n"+next+"\n")
					wrote <- err
				}()
				for range 3 {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
					m, err := s.readInterruptible(ctx)
					cancel()
					if !errors.Is(err, errReadInterrupted) {
						t.Fatalf("read of an incomplete line: %v, %v; want errReadInterrupted", m, err)
					}
				}
				close(resume)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				m, err := s.readInterruptible(ctx)
				if tt.want == "" {
					var de *DecodeError
					if !errors.As(err, &de) || !strings.Contains(de.Err.Message, "exceeds the limit") {
						t.Fatalf("too long line: %v, %v", m, err)
					}
				} else {
					req, ok := m.(*Request)
					if err != nil || !ok || req.Method != "m" || string(req.Params) != tt.want {
						t.Fatalf("completed line: %.100v, %v", m, err)
					}
				}
				m, err = s.readInterruptible(ctx)
				if req, ok := m.(*Request); err != nil || !ok || req.Method != "next" {
					t.Fatalf("next line: %v, %v", m, err)
				}
				if err := <-wrote; err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestLineStreamInterruptedBeforeReading checks that a read whose context
// has ended consumes nothing.
func TestLineStreamInterruptedBeforeReading(t *testing.T) {
	for _, p := range deadlinePipes() {
		t.Run(p.name, func(t *testing.T) {
			r, w := p.pipe(t)
			s := NewLineStream(r, io.Discard, nil, 0)
			go io.WriteString(w, `{"jsonrpc":"2.0","method":"m"}`+"\n")
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if m, err := s.readInterruptible(ctx); !errors.Is(err, errReadInterrupted) {
				t.Fatalf("read with an ended context: %v, %v", m, err)
			}
			if m, err := s.Read(context.Background()); err != nil || m.(*Request).Method != "m" {
				t.Fatalf("next read: %v, %v", m, err)
			}
		})
	}
}

// TestLineStreamLateInterrupt ends the context of interruptible reads
// just as they return, over and over: the deadline that a late
// interruption could set must never fail a later read.
func TestLineStreamLateInterrupt(t *testing.T) {
	for _, p := range deadlinePipes() {
		t.Run(p.name, func(t *testing.T) {
			r, w := p.pipe(t)
			s := NewLineStream(r, io.Discard, nil, 0)
			const n = 2000
			go func() {
				line := []byte(`{"jsonrpc":"2.0","method":"m"}` + "\n")
				for i := range n {
					if i%50 == 0 {
						time.Sleep(time.Millisecond)
					}
					if _, err := w.Write(line); err != nil {
						return
					}
				}
			}()
			got := 0
			for i := 0; got < n; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				racing := i%2 == 0
				if racing {
					go cancel() // races with the read
				}
				m, err := s.readInterruptible(ctx)
				cancel()
				switch {
				case errors.Is(err, errReadInterrupted) && racing:
				case errors.Is(err, errReadInterrupted):
					t.Fatalf("read %d interrupted, its context alive", i)
				case err != nil:
					t.Fatalf("read %d: %v", i, err)
				case m.(*Request).Method != "m":
					t.Fatalf("read %d: %v", i, m)
				default:
					got++
				}
			}
			// The reader's deadline is clear: a plain read blocks until
			// a line comes.
			errc := make(chan error, 1)
			go func() { _, err := s.Read(context.Background()); errc <- err }()
			select {
			case err := <-errc:
				t.Fatalf("read returned early: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := io.WriteString(w, `{"jsonrpc":"2.0","method":"m"}`+"\n"); err != nil {
				t.Fatal(err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLineStreamTooLongThenEOF checks the end of input in a line too long
// to keep, which the interruption's bookkeeping must not change.
func TestLineStreamTooLongThenEOF(t *testing.T) {
	in := `{"jsonrpc":"2.0","method":"m","params":{"s":"` + strings.Repeat("y", 300<<10)
	s := NewLineStream(bytes.NewReader([]byte(in)), io.Discard, nil, 100<<10)
	_, err := s.Read(context.Background())
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("too long line: %v", err)
	}
	if _, err := s.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after it: %v, want EOF", err)
	}
}
