package authserver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/authserver"
)

// #17.8: what a registration may store is bounded, as a whole and per
// member.
func TestRegistrationSizeBounds(t *testing.T) {
	list := func(n int, f string) string {
		var v []string
		for i := range n {
			v = append(v, fmt.Sprintf(`"`+f+`"`, i))
		}
		return strings.Join(v, ",")
	}
	for _, tc := range []struct {
		name string
		body string
		want int
	}{
		{"15 KB of unknown members", `{"client_name":"x","redirect_uris":["https://a.test/cb"],"pad":"` + strings.Repeat("x", 15<<10) + `"}`, http.StatusRequestEntityTooLarge},
		{"escaping past the bound", `{"client_name":"x","redirect_uris":["https://a.test/cb"],"software_id":"` + strings.Repeat("<", 1900) + `","software_version":"` + strings.Repeat("<", 1900) + `"}`, http.StatusRequestEntityTooLarge},
		{"11 redirect URIs", `{"redirect_uris":[` + list(11, "https://a.test/cb%d") + `]}`, http.StatusBadRequest},
		{"11 contacts", `{"redirect_uris":["https://a.test/cb"],"contacts":[` + list(11, "a%d@a.test") + `]}`, http.StatusBadRequest},
		{"repeated grant types", `{"redirect_uris":["https://a.test/cb"],"grant_types":["authorization_code","authorization_code"]}`, http.StatusBadRequest},
		{"repeated redirect URIs", `{"redirect_uris":["https://a.test/cb","https://a.test/cb"]}`, http.StatusBadRequest},
		{"10 redirect URIs", `{"redirect_uris":[` + list(10, "https://a.test/cb%d") + `]}`, http.StatusCreated},
		{"unknown members under the bound", `{"client_name":"x","redirect_uris":["https://a.test/cb"],"pad":"` + strings.Repeat("x", 6<<10) + `"}`, http.StatusCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAS(t, nil, nil)
			w := serveAs(a, "POST", "/register", "application/json", tc.body, "192.0.2.1:1", nil)
			if w.Code != tc.want {
				t.Fatalf("%d, want %d: %.300s", w.Code, tc.want, w.Body)
			}
			if w.Code != http.StatusCreated {
				return
			}
			var info struct {
				ClientID string `json:"client_id"`
			}
			_ = json.Unmarshal(w.Body.Bytes(), &info)
			c, err := a.store.Client(t.Context(), info.ClientID)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(c.Metadata)
			if len(b) > authserver.DefaultMaxClientMetadataBytes || strings.Contains(string(b), "xxxx") {
				t.Fatalf("stored %d bytes of metadata, unknown members kept: %.200s", len(b), b)
			}
		})
	}
}

// #17.8: a registered client never used is deleted after UnusedClientTTL;
// one used is kept.
func TestUnusedClientsPruned(t *testing.T) {
	clk := &clock{t: time.Now()}
	a := newAS(t, func(c *authserver.Config) { trustAll(c); c.Now = clk.now }, nil)
	register := func(name string) string {
		t.Helper()
		w := serveAs(a, "POST", "/register", "application/json",
			`{"client_name":"`+name+`","redirect_uris":["`+loopbackRedirect+`"],"token_endpoint_auth_method":"none"}`, "192.0.2.1:1", nil)
		var info struct {
			ClientID string `json:"client_id"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &info); err != nil || w.Code != http.StatusCreated {
			t.Fatalf("registering %s: %d %s", name, w.Code, w.Body)
		}
		return info.ClientID
	}
	used, unused := register("used"), register("unused")
	a.code(t, used, loopbackRedirect, verifier)
	clk.add(7*24*time.Hour + time.Minute)
	fresh := register("fresh") // registration runs the periodic pruning
	for _, tc := range []struct {
		id   string
		kept bool
	}{{used, true}, {unused, false}, {fresh, true}} {
		_, err := a.store.Client(t.Context(), tc.id)
		if kept := err == nil; kept != tc.kept || (err != nil && !errors.Is(err, authserver.ErrNotFound)) {
			t.Errorf("client %s: kept %v (%v), want %v", tc.id, kept, err, tc.kept)
		}
	}
}
