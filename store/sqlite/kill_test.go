package sqlite_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
	"github.com/mcpstack/mcpstack/oauth"
	"github.com/mcpstack/mcpstack/store/sqlite"
)

// killDBEnv names the database the child process of TestKillDuringRefreshes
// refreshes in; the test runs itself as that child.
const killDBEnv = "MCPSTACK_TEST_KILL_DB"

const killGrants = 100

func sha(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// announcing prints every refresh token the server is about to store, as
// "ROT family hash", before the store sees it: the parent then knows every
// token the database may hold.
type announcing struct {
	authserver.Store
	mu sync.Mutex
}

func (a *announcing) RotateRefreshToken(ctx context.Context, hash string, next authserver.RefreshToken) (authserver.RefreshToken, error) {
	a.mu.Lock()
	fmt.Fprintf(os.Stdout, "ROT %s %s\n", next.FamilyID, next.Hash)
	a.mu.Unlock()
	return a.Store.RotateRefreshToken(ctx, hash, next)
}

// TestKillDuringRefreshes kills (SIGKILL) a process in the middle of
// refreshing 100 grants as fast as it can, and checks that every grant
// still has exactly one usable refresh token in the database: rotation is
// one transaction, which SQLite's journal either keeps or undoes whole.
func TestKillDuringRefreshes(t *testing.T) {
	if path := os.Getenv(killDBEnv); path != "" {
		killChild(t, path)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "as.db")
		st, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CreateClient(t.Context(), authserver.Client{Metadata: oauth.ClientMetadata{ClientID: "app",
			RedirectURIs: []string{"http://127.0.0.1:9/cb"}, TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}}}); err != nil {
			t.Fatal(err)
		}
		known := map[string][]string{}
		for i := range killGrants {
			fam := fmt.Sprintf("fam%03d", i)
			rt := authserver.RefreshToken{Hash: sha(fmt.Sprintf("tok%03d", i)), FamilyID: fam, ClientID: "app", Subject: "alice",
				Resource: "https://rs.test/mcp", ExpiresAt: time.Now().Add(time.Hour)}
			if err := st.SaveRefreshToken(t.Context(), rt); err != nil {
				t.Fatal(err)
			}
			known[fam] = append(known[fam], rt.Hash)
		}
		st.Close()

		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringRefreshes$", "-test.count=1")
		cmd.Env = append(os.Environ(), killDBEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		rotations := 0
		started := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(out)
			once := sync.OnceFunc(func() { close(started) })
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) == 3 && f[0] == "ROT" {
					known[f[1]] = append(known[f[1]], f[2])
					rotations++
					once()
				}
			}
			once()
		}()
		<-started
		time.Sleep(200*time.Millisecond + rand.N(400*time.Millisecond))
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()

		st, err = sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		lost := 0
		for fam, hashes := range known {
			usable := 0
			for _, h := range hashes {
				if _, err := st.RefreshToken(t.Context(), h); err == nil {
					usable++
				}
			}
			if revoked, _ := st.FamilyRevoked(t.Context(), fam); revoked || usable != 1 {
				lost++
			}
		}
		st.Close()
		t.Logf("round %d: killed after %d rotations were started; grants lost: %d of %d", round, rotations, lost, killGrants)
		if lost != 0 {
			t.Fatalf("%d of %d grants lost to kill -9", lost, killGrants)
		}
	}
}

// killChild refreshes every grant in a loop until the process is killed.
func killChild(t *testing.T, path string) {
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	s, err := authserver.NewServer(context.Background(), authserver.Config{Issuer: ts.URL, Store: &announcing{Store: st},
		DevUser: "alice", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h = s
	var wg sync.WaitGroup
	for i := range killGrants {
		wg.Go(func() {
			tok := fmt.Sprintf("tok%03d", i)
			for {
				resp, err := ts.Client().PostForm(ts.URL+"/token", url.Values{"grant_type": {"refresh_token"},
					"client_id": {"app"}, "refresh_token": {tok}})
				if err != nil {
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var tr oauth.TokenResponse
				if resp.StatusCode == http.StatusOK && tr.UnmarshalJSON(b) == nil {
					tok = tr.RefreshToken
				}
			}
		})
	}
	wg.Wait()
}
