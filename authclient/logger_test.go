package authclient

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of a
// logger.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLoggerShowsTheLoginSteps checks that Config.Logger gets one info
// record per login step, in order, and never a token.
func TestLoggerShowsTheLoginSteps(t *testing.T) {
	as := newFakeAS(t, nil)
	rs := newFakeRS(t, as, func(s *fakeRS) {
		s.challengeScp = []string{"read"}
		s.required = func(r *http.Request) []string {
			if r.URL.Query().Get("op") == "write" {
				return []string{"write"}
			}
			return []string{"read"}
		}
	})
	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	tr := NewTransport(Config{Authorizer: follower(), Logger: log})
	if st, err := call(t, tr.Client(), rs.url(), `{}`); err != nil || st != 200 {
		t.Fatalf("read: %d %v", st, err)
	}
	if st, err := call(t, tr.Client(), rs.url()+"?op=write", `{}`); err != nil || st != 200 {
		t.Fatalf("write: %d %v", st, err)
	}
	got := out.String()
	steps := []string{
		"discovered the authorization server",
		"registered the client dynamically",
		"authorization URL handed to the browser",
		"token obtained",
		"step-up: the server asks for more scope",
		"authorization URL handed to the browser",
		"token obtained",
	}
	rest := got
	for _, s := range steps {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("log lacks %q (in order):\n%s", s, got)
		}
		rest = rest[i+len(s):]
	}
	for tok := range as.Tokens {
		if strings.Contains(got, tok) {
			t.Errorf("log carries an access token:\n%s", got)
		}
	}
}
