package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"runtime/pprof"
	"sync"
	"testing"
	"time"
)

// FuzzLineStreamInterrupted writes arbitrary input through an OS pipe in
// pieces, interrupting the reader's reads between the pieces, and checks
// that the reader reads the same messages as one reading the input whole:
// an interruption loses nothing, mid-line or not.
func FuzzLineStreamInterrupted(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s+"\n\n"+s+"\r\n"+s), []byte{3, 10, 1, 40})
	}
	f.Add([]byte(`{"jsonrpc":"2.0","method":"a-rather-long-method-name-that-exceeds-the-limit"}`+"\n"+`{"jsonrpc":"2.0","method":"m"}`), []byte{20, 30})
	const maxSize = 64
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		want := readLines(t, NewLineStream(bytes.NewReader(data), io.Discard, nil, maxSize), nil)

		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		s := NewLineStream(r, io.Discard, nil, maxSize)
		var mu sync.Mutex
		var cancelRead context.CancelFunc
		interrupt := func() {
			mu.Lock()
			defer mu.Unlock()
			if cancelRead != nil {
				cancelRead()
			}
		}
		gotc := make(chan []string, 1)
		go func() {
			gotc <- readLines(t, s, func() context.Context {
				mu.Lock()
				defer mu.Unlock()
				ctx, cancel := context.WithCancel(context.Background())
				cancelRead = cancel
				return ctx
			})
		}()
		rest := data
		for _, c := range cuts {
			n := min(int(c), len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
			interrupt()
		}
		if _, err := w.Write(rest); err != nil {
			t.Fatal(err)
		}
		w.Close()
		var got []string
		select {
		case got = <-gotc:
		case <-time.After(5 * time.Second):
			var b bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
			t.Fatalf("stalled:\n%s", b.String())
		}
		if len(got) != len(want) {
			t.Fatalf("read %d messages, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("message %d: %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// readLines reads s to its end and returns what it read, a message's
// encoding or an error's text each. With newCtx, it reads with
// readInterruptible, with a context from newCtx each time, and skips
// interruptions.
func readLines(t *testing.T, s *LineStream, newCtx func() context.Context) []string {
	var out []string
	for {
		var m Message
		var err error
		if newCtx != nil {
			m, err = s.readInterruptible(newCtx())
			if errors.Is(err, errReadInterrupted) {
				continue
			}
		} else {
			m, err = s.Read(context.Background())
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Errorf("read: %v", err)
				return out
			}
			out = append(out, "error: "+de.Err.Message)
			continue
		}
		b, err := Encode(m)
		if err != nil {
			out = append(out, "unencodable: "+err.Error())
			continue
		}
		out = append(out, string(b))
	}
}
