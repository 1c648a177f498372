package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/strictjson"
	"github.com/mcpstack/mcpstack/jsonrpc"
)

// EraPolicy says how Client.Connect decides which era of the protocol a
// server speaks (revision 2026-07-28, basic/versioning "Backward
// Compatibility with Initialization-Based Versions"): modern (per-request
// _meta, no handshake) or legacy (an initialize handshake).
type EraPolicy uint8

const (
	// EraPolicyDefault probes over Streamable HTTP (EraPolicyAuto) and
	// speaks legacy on every other transport (EraPolicyLegacy): on stdio a
	// probe is a request before initialize, which some legacy servers
	// answer by exiting, so it is opt-in there.
	EraPolicyDefault EraPolicy = iota
	// EraPolicyAuto sends a modern server/discover first and falls back to
	// initialize when the answer is not modern. Over HTTP a 400, 404 or
	// 405 without a recognized modern JSON-RPC error body, or a JSON-RPC
	// error that is not one of the revision's own codes, means legacy; a
	// 401 or 403 never says anything about the era and fails Connect.
	// Over stdio any non-modern error means legacy, and so does no answer
	// within ClientOptions.ProbeTimeout.
	EraPolicyAuto
	// EraPolicyLegacy always opens with initialize (the cached verdict
	// "legacy": no probe is sent).
	EraPolicyLegacy
	// EraPolicyModern speaks only modern versions: it probes with
	// server/discover (unless ClientOptions.PriorDiscover is set) and
	// fails Connect rather than falling back.
	EraPolicyModern
	// EraPolicyProbeSibling is EraPolicyAuto with the probe sent to a
	// separate, throwaway process of the same command, for a server
	// started by CommandTransport (client_probe_sibling.go): the real
	// connection never receives a request before it knows the era, so a
	// legacy server that exits on one is not lost. The probe process gets
	// server/discover and is shut down once it answered, exited, or
	// ClientOptions.ProbeTimeout passed; only an answer naming a version
	// the client speaks makes the session modern (with that answer as its
	// DiscoverResult, and no request on the real connection), anything
	// else means initialize. The verdict is the session's (Era,
	// DiscoverResult): pass DiscoverResult as PriorDiscover, or pin
	// EraPolicyLegacy, to connect again without a probe. The command runs
	// twice at once for a moment: a server that holds an exclusive
	// resource (a lock, a port) fails in the probe and is taken for
	// legacy. Over Streamable HTTP it is EraPolicyAuto, over other
	// transports EraPolicyLegacy.
	EraPolicyProbeSibling
)

// DefaultProbeTimeout bounds the wait for the answer to the stdio era
// probe (ClientOptions.ProbeTimeout): a legacy server may ignore a request
// sent before initialize.
const DefaultProbeTimeout = 5 * time.Second

// DefaultMaxInputRounds is the default of ClientOptions.MaxInputRounds.
const DefaultMaxInputRounds = 8

// DefaultMaxInputRequests is the default of ClientOptions.MaxInputRequests:
// a form, a sampling and the roots are what a request asks for at once;
// 16 leaves room for a tool that asks several questions together.
const DefaultMaxInputRequests = 16

// ErrNoCommonVersion is returned (wrapped) by Client.Connect when a modern
// server and the client share no protocol version and the policy does
// not allow the legacy handshake.
var ErrNoCommonVersion = errors.New("mcp: the server and the client share no protocol version")

// ErrProbeKilledServer is returned (wrapped) by Client.Connect when the
// connection ended while the era probe was outstanding: the server, most
// likely a legacy one, exited on a request before initialize. Connect
// again with EraPolicyLegacy, or, for a CommandTransport, probe a
// throwaway process with EraPolicyProbeSibling.
var ErrProbeKilledServer = errors.New("mcp: the connection ended during the era probe (a legacy server that exits on requests before initialize?)")

// modernErrorCodes are the JSON-RPC error codes that only a modern server
// sends (basic/index "Error codes"): one of them in answer to the probe
// says the server is modern, whatever else is wrong.
var modernErrorCodes = []int64{CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion}

// isModernError reports whether err carries a JSON-RPC error with one of
// the codes only a modern server sends, and returns it.
func isModernError(err error) (*jsonrpc.Error, bool) {
	var je *jsonrpc.Error
	if errors.As(err, &je) && slices.Contains(modernErrorCodes, int64(je.Code)) {
		return je, true
	}
	return nil, false
}

// eraStream is implemented by client streams whose binding differs by era
// (mcphttp's client sends the revision's headers and no session id to a
// modern server). SetModernVersion is called before the first message of
// each era: with a modern version, or "" for legacy.
type eraStream interface {
	SetModernVersion(v string)
}

// httpBinding is implemented by client streams that mirror request
// metadata into headers (mcphttp's client): only there are x-mcp-header
// annotations mirrored (and invalid ones rejected), and the era probe is
// on by default.
type httpBinding interface {
	MirrorsRequestHeaders() bool
}

// httpStatuser is implemented by a transport's error for an HTTP answer
// it could not use (mcphttp.StatusError): its status says whether the era
// probe's failure is evidence of a legacy server.
type httpStatuser interface {
	HTTPStatus() int
}

// policy resolves EraPolicyDefault for the stream.
func (c *Client) policy(stream jsonrpc.Stream) EraPolicy {
	if p := c.opts.EraPolicy; p != EraPolicyDefault {
		return p
	}
	return defaultPolicy(stream)
}

// defaultPolicy is what EraPolicyDefault means for the stream.
func defaultPolicy(stream jsonrpc.Stream) EraPolicy {
	if b, ok := stream.(httpBinding); ok && b.MirrorsRequestHeaders() {
		return EraPolicyAuto
	}
	return EraPolicyLegacy
}

// modernVersions are the modern versions the client speaks, preferred
// first.
func (c *Client) modernVersions() []string {
	var vs []string
	for _, v := range c.opts.ProtocolVersions {
		if IsModernProtocolVersion(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 && !c.versionsGiven {
		vs = ModernProtocolVersions()
	}
	return vs
}

// pickModern returns the first of the client's modern versions the server
// lists.
func (c *Client) pickModern(supported []string) (string, bool) {
	for _, v := range c.modernVersions() {
		if slices.Contains(supported, v) {
			return v, true
		}
	}
	return "", false
}

// negotiateEra decides the era of the session before anything else is
// sent. It reports whether the session is modern (then it is ready);
// false means: open it with initialize. It sends at most one request
// (server/discover), two when the first is refused with
// UnsupportedProtocolVersionError naming a version the client speaks, and
// none with EraPolicyLegacy or a usable ClientOptions.PriorDiscover.
func (cs *ClientSession) negotiateEra(ctx context.Context) (bool, error) {
	c := cs.client
	pol := c.policy(cs.stream)
	var sibling *CommandTransport
	if pol == EraPolicyProbeSibling {
		if sibling = cs.siblingCommand(); sibling == nil {
			if pol = defaultPolicy(cs.stream); pol == EraPolicyLegacy {
				return false, nil
			}
		}
	}
	if pol == EraPolicyLegacy {
		return false, nil
	}
	if prior := c.opts.PriorDiscover; prior != nil {
		if v, ok := c.pickModern(prior.SupportedVersions); ok {
			cs.becomeModern(v, prior)
			return true, nil
		}
		if pol == EraPolicyModern {
			return false, fmt.Errorf("%w: the cached discover result lists %s", ErrNoCommonVersion, versionList(prior.SupportedVersions))
		}
		return false, nil
	}
	versions := c.modernVersions()
	if len(versions) == 0 {
		if pol == EraPolicyModern {
			return false, fmt.Errorf("%w: ClientOptions.ProtocolVersions holds no modern version", ErrNoCommonVersion)
		}
		return false, nil
	}
	v := versions[0]
	for attempt := 0; ; attempt++ {
		cs.becomeModern(v, nil)
		var res *DiscoverResult
		var err error
		if sibling != nil {
			res, err = cs.probeSibling(ctx, sibling)
		} else {
			res, err = cs.probe(ctx)
		}
		if err == nil {
			if cv, ok := c.pickModern(res.SupportedVersions); ok {
				cs.becomeModern(cv, res)
				return true, nil
			}
			// A modern server that speaks none of our modern versions: a
			// dual-era one may still take initialize.
			return cs.legacyOr(pol, fmt.Errorf("%w: the server speaks %s", ErrNoCommonVersion, versionList(res.SupportedVersions)))
		}
		if je, ok := isModernError(err); ok {
			if je.Code != CodeUnsupportedProtocolVersion || attempt > 0 {
				return false, fmt.Errorf("mcp: server/discover: %w", err)
			}
			var data UnsupportedProtocolVersionData
			if len(je.Data) > 0 {
				_ = strictjson.Unmarshal(je.Data, &data)
			}
			if nv, ok := c.pickModern(data.Supported); ok {
				v = nv // retry once, with a version the server named
				continue
			}
			return cs.legacyOr(pol, fmt.Errorf("%w: the server speaks %s", ErrNoCommonVersion, versionList(data.Supported)))
		}
		if !cs.legacyEvidence(ctx, err) {
			cs.becomeLegacy()
			return false, fmt.Errorf("mcp: era probe (server/discover): %w", err)
		}
		if pol == EraPolicyModern {
			cs.becomeLegacy()
			return false, fmt.Errorf("mcp: the server is not modern: %w", err)
		}
		cs.client.log.Debug("mcp: era probe says legacy", "error", err)
		cs.becomeLegacy()
		return false, nil
	}
}

// maxListedVersions is how many of a server's versions an error names: a
// server may send any number (server/discover, -32022), and the message
// stays one readable line.
const maxListedVersions = 8

// versionList shows the versions a server listed, for an error: at most
// maxListedVersions of them, each cut to a sane length, and how many more
// there were.
func versionList(vs []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vs {
		if i == maxListedVersions {
			fmt.Fprintf(&b, " and %d more", len(vs)-i)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(clip.String(v))
	}
	b.WriteByte(']')
	return b.String()
}

// legacyOr falls back to initialize unless the policy is modern-only.
func (cs *ClientSession) legacyOr(pol EraPolicy, err error) (bool, error) {
	cs.becomeLegacy()
	if pol == EraPolicyModern {
		return false, err
	}
	return false, nil
}

// legacyEvidence reports whether the probe's failure says the server is
// legacy (rather than that the probe could not be made).
func (cs *ClientSession) legacyEvidence(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var he httpStatuser
	if errors.As(err, &he) {
		// The revision names 400 (and, for the HTTP+SSE fallback, 404 and
		// 405); an authorization failure (401, 403) is never evidence of
		// the era.
		switch he.HTTPStatus() {
		case 400, 404, 405:
			return true
		}
		return false
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return true // a JSON-RPC error that is not a modern one
	}
	// stdio: no answer within the probe timeout means legacy too.
	return errors.Is(err, errProbeTimeout) || errors.Is(err, errSiblingGone)
}

// errProbeTimeout is the cause of a stdio probe that got no answer within
// ClientOptions.ProbeTimeout.
var errProbeTimeout = errors.New("mcp: no answer to the era probe")

// probe sends server/discover with the session's modern _meta.
func (cs *ClientSession) probe(ctx context.Context) (*DiscoverResult, error) {
	pctx := ctx
	if b, ok := cs.stream.(httpBinding); !ok || !b.MirrorsRequestHeaders() {
		d := cs.client.opts.ProbeTimeout
		if d <= 0 {
			d = DefaultProbeTimeout
		}
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeoutCause(ctx, d, errProbeTimeout)
		defer cancel()
	}
	var res DiscoverResult
	err := cs.send(pctx, MethodServerDiscover, nil, &res)
	if err != nil {
		if errors.Is(err, jsonrpc.ErrClosed) {
			return nil, fmt.Errorf("%w: %w", ErrProbeKilledServer, err)
		}
		if ctx.Err() == nil && errors.Is(context.Cause(pctx), errProbeTimeout) {
			return nil, errProbeTimeout
		}
		return nil, err
	}
	if len(res.SupportedVersions) == 0 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "mcp: server/discover answered without supportedVersions")
	}
	return &res, nil
}

// becomeModern makes the session modern at version v; discover, if known,
// is the server's DiscoverResult.
func (cs *ClientSession) becomeModern(v string, discover *DiscoverResult) {
	cs.mu.Lock()
	cs.modernVersion = v
	if cs.cache == nil {
		cs.cache = newResultCache(cs.client.opts.ResultCacheEntries, cs.client.opts.ResultCacheBytes)
	}
	if discover != nil {
		cs.discover = discover
		cs.initResult = initResultFromDiscover(v, discover)
	}
	cs.metaCache = nil
	cs.mu.Unlock()
	if es, ok := cs.stream.(eraStream); ok {
		es.SetModernVersion(v)
	}
}

// becomeLegacy makes the session legacy again, after a probe.
func (cs *ClientSession) becomeLegacy() {
	cs.mu.Lock()
	cs.modernVersion = ""
	cs.discover = nil
	cs.metaCache = nil
	cs.mu.Unlock()
	if es, ok := cs.stream.(eraStream); ok {
		es.SetModernVersion("")
	}
}

// initResultFromDiscover presents a modern server's discover result as an
// InitializeResult, so that code written for the legacy handshake (a
// command line's "info", capability checks) works with either era.
func initResultFromDiscover(v string, d *DiscoverResult) *InitializeResult {
	r := &InitializeResult{ProtocolVersion: v, Capabilities: d.Capabilities, Instructions: d.Instructions, Meta: d.Meta}
	if raw, ok := d.Meta[MetaKeyServerInfo]; ok {
		if b, err := json.Marshal(raw); err == nil {
			_ = strictjson.Unmarshal(b, &r.ServerInfo)
		}
	}
	return r
}

// Era returns the era the session speaks: EraModern when Connect found (or
// was told) a modern server, else EraLegacy.
func (cs *ClientSession) Era() Era {
	if cs.modern() {
		return EraModern
	}
	return EraLegacy
}

// DiscoverResult returns the modern server's answer to server/discover
// (or ClientOptions.PriorDiscover), nil for a legacy session. Keep it to
// pass as PriorDiscover next time, which saves the probe (revision
// 2026-07-28 lets a client cache the era verdict for an origin).
func (cs *ClientSession) DiscoverResult() *DiscoverResult {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.discover
}

// modern reports whether the session speaks a modern version.
func (cs *ClientSession) modern() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.modernVersion != ""
}

// requestMeta returns the protocol members of a modern request's _meta,
// encoded once per session: the version, the client's capabilities and
// its Implementation, plus the log level SetLoggingLevel chose. ok is
// false for a legacy session.
func (cs *ClientSession) requestMeta() (map[string]json.RawMessage, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.modernVersion == "" {
		return nil, false
	}
	if cs.metaCache == nil {
		m := make(map[string]json.RawMessage, 4)
		m[MetaKeyProtocolVersion], _ = json.Marshal(cs.modernVersion)
		m[MetaKeyClientCapabilities], _ = json.Marshal(cs.client.modernCapabilities())
		m[MetaKeyClientInfo], _ = json.Marshal(cs.client.impl)
		if cs.logLevel != "" {
			m[MetaKeyLogLevel], _ = json.Marshal(cs.logLevel)
		}
		cs.metaCache = m
	}
	return cs.metaCache, true
}

// modernCapabilities are the capabilities a modern request declares: the
// legacy ones less what revision 2026-07-28 removed (roots.listChanged,
// with notifications/roots/list_changed; the core tasks capability, now
// the io.modelcontextprotocol/tasks extension, declared with
// ClientOptions.TasksExtension).
func (c *Client) modernCapabilities() *ClientCapabilities {
	caps := *c.capabilities()
	if caps.Roots != nil {
		caps.Roots = &RootsCapability{}
	}
	caps.Tasks = nil
	if c.opts.TasksExtension {
		ext := make(map[string]json.RawMessage, len(caps.Extensions)+1)
		for k, v := range caps.Extensions {
			ext[k] = v
		}
		ext[TasksExtensionID] = json.RawMessage(`{}`)
		caps.Extensions = ext
	}
	return &caps
}

// withModernMeta returns params with the session's protocol members set in
// _meta, keeping every other member (a progressToken, application keys).
// The protocol members always win: the body is the source of truth the
// HTTP headers mirror.
func withModernMeta(params json.RawMessage, meta map[string]json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &obj); err != nil {
			return nil, fmt.Errorf("mcp: params are not a JSON object: %w", err)
		}
	}
	if obj == nil {
		obj = make(map[string]json.RawMessage, 1)
	}
	var m map[string]json.RawMessage
	if raw, ok := obj["_meta"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("mcp: _meta is not a JSON object: %w", err)
		}
	}
	if m == nil {
		m = make(map[string]json.RawMessage, len(meta))
	}
	for k, v := range meta {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = b
	return json.Marshal(obj)
}
