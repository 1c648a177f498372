package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/auth"
	"github.com/mcpstack/mcpstack/authclient"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcp/mcphttp"
	"github.com/mcpstack/mcpstack/oauth"
)

// serveClientDocument serves m as a Client ID Metadata Document on a new
// https server (authorization servers fetch only https client_ids) and
// returns its URL, which it sets as m's client_id; a PEM file of the
// server's certificate, for the child that must trust it
// (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE); and the count of fetches of the
// document. The server closes with the test.
func serveClientDocument(t *testing.T, m oauth.ClientMetadata) (clientID, caFile string, fetches *atomic.Int32) {
	t.Helper()
	fetches = new(atomic.Int32)
	doc := httptest.NewUnstartedServer(nil)
	doc.StartTLS()
	t.Cleanup(doc.Close)
	m.ClientID = doc.URL + "/client.json"
	h, err := authclient.MetadataDocumentHandler(m, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	doc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		h.ServeHTTP(w, r)
	})
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: doc.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return m.ClientID, caFile, fetches
}

// guardedMCP returns the Streamable HTTP handler of an MCP server named
// name behind bearer-token checks for resource: a JWT verifier with the
// JWKS of issuer (discovered from its metadata) checks that the audience
// is resource. It has a whoami tool (scope mcp) and an admin tool (scope
// admin too), both answering "subject scopes"; calls, unless nil, counts
// the calls that reached a tool. The caller serves the resource's
// metadata.
func guardedMCP(t *testing.T, name, issuer, resource string, calls *atomic.Int32) http.Handler {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	whoami := func(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolRequestParams, in struct{}) (*mcp.CallToolResult, any, error) {
		if calls != nil {
			calls.Add(1)
		}
		pr, _ := auth.PrincipalFromContext(ctx)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: pr.Subject + " " + strings.Join(pr.Scopes, ",")}}}, nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, whoami)
	mcp.AddTool(s, &mcp.Tool{Name: "admin"}, whoami)
	v, err := auth.NewJWTVerifier(auth.JWTOptions{Issuer: issuer, Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	bearer, err := auth.NewMiddleware(auth.Options{Resource: resource, Verifier: v, Scopes: []string{"mcp"},
		ToolScopes: map[string][]string{"admin": {"admin"}}})
	if err != nil {
		t.Fatal(err)
	}
	return bearer.Wrap(mcphttp.NewHandler(func(*http.Request) *mcp.Server { return s },
		&mcphttp.Options{Identity: auth.SessionIdentity}))
}

// tsRun is what one run of interop/node/ts-client.mjs did.
type tsRun struct {
	steps  map[string]tsStep // by step name; a later line wins
	junk   []string          // lines of standard output that are not a step
	out    []byte
	stderr string
	err    error // of the process
}

// String tells all of the run, for a failed test's message.
func (r tsRun) String() string {
	return fmt.Sprintf("ts-client.mjs: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.out, r.stderr)
}

// runTSClient runs ts-client.mjs with args under the Node runtime nodeBin,
// in nodeDir, with the environment env, until it exits or ctx ends, and
// reads the JSON step lines it prints.
func runTSClient(ctx context.Context, nodeBin string, env []string, args ...string) tsRun {
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{"ts-client.mjs"}, args...)...)
	cmd.Dir = nodeDir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var r tsRun
	r.out, r.err = cmd.Output()
	r.stderr = stderr.String()
	r.steps = map[string]tsStep{}
	sc := bufio.NewScanner(bytes.NewReader(r.out))
	for sc.Scan() {
		var s tsStep
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			r.junk = append(r.junk, sc.Text())
			continue
		}
		r.steps[s.Step] = s
	}
	return r
}
