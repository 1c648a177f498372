// ts-client.mjs runs the TypeScript MCP SDK's client (the pinned
// @modelcontextprotocol/sdk) with its OAuth client provider against an MCP
// server protected by an authorization server, for interop/ts_test.go.
//
// Usage: node ts-client.mjs MCP_URL REDIRECT_URL [CLIENT_METADATA_URL]
//
// With CLIENT_METADATA_URL the provider offers it as clientMetadataUrl (a
// Client ID Metadata Document); otherwise the SDK registers the client
// dynamically. The script:
//   1. connects: the server answers 401, the SDK discovers the
//      authorization server, obtains a client, and calls
//      redirectToAuthorization; our stand-in browser (below) brings back
//      the code, and transport.finishAuth(code) redeems it; the client then
//      connects again with the token;
//   2. calls the tool named by TOOL (default "echo"), allowed by the first
//      scope;
//   3. calls the tool named by STEPUP_TOOL (default "time"), which needs a
//      wider scope: the server answers 403 insufficient_scope, the SDK
//      authorizes again with the challenged scope, the browser brings back
//      a code, finishAuth redeems it, and the call is retried on the same
//      session.
// Each step prints one JSON line on stdout ({"step": ...}); a failure prints
// {"step":"error",...} and exits 1.
//
// The stand-in browser (browser.mjs): it follows the authorization URL,
// keeping cookies, to the redirect back. mcpstack authserver --dev-user
// signs the user in without a form, so the answer is either the redirect
// back (a trusted client) or the consent page; it then posts the consent
// form as a browser would: the page's hidden csrf and request fields with
// action=allow, to the form's action, with the cookies the page set. With
// --upstream-issuer the redirects go on through the upstream provider's
// sign-in (oidc.mjs, no page to fill in). The redirect's state is
// checked against the request before the code is handed back; its iss (RFC
// 9207, which the SDK itself does not check) is reported with each
// authorization, and the Go test compares it with the issuer.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { browse as follow } from './browser.mjs';

const [mcpURL, redirectURL, clientMetadataUrl] = process.argv.slice(2);
if (!mcpURL || !redirectURL) {
  console.error('usage: node ts-client.mjs MCP_URL REDIRECT_URL [CLIENT_METADATA_URL]');
  process.exit(2);
}
const tool = process.env.TOOL || 'echo';
// STEPUP_TOOL="" (set and empty) skips step 3.
const stepUpTool = process.env.STEPUP_TOOL ?? 'time';
// GRANT_TYPES are the grant_types registered by DCR (default
// "authorization_code": no refresh token, see the step-up note below).
// REREGISTER=1: when the step-up authorization is refused with
// invalid_scope (the SDK registered the client with the first challenge's
// scope, which the authorization server then holds it to, RFC 7591 §2),
// the application forgets the registration and the token and asks the SDK
// (its exported auth function) to authorize again with the step-up scope:
// the SDK registers a new client with that scope, and the flow goes on.
const reregister = process.env.REREGISTER === '1';

const out = (o) => console.log(JSON.stringify(o));

// The provider keeps everything in memory, as the SDK's interface asks.
class Provider {
  constructor() {
    this.info = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.code = undefined;
    this.authorizations = [];
    this.registrations = 0;
    if (clientMetadataUrl) this.clientMetadataUrl = clientMetadataUrl;
  }
  get redirectUrl() { return redirectURL; }
  get clientMetadata() {
    return {
      client_name: 'TypeScript SDK interop (DCR)',
      redirect_uris: [redirectURL],
      grant_types: (process.env.GRANT_TYPES || 'authorization_code').split(' '),
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() { this.lastState = crypto.randomUUID(); return this.lastState; }
  clientInformation() { return this.info; }
  saveClientInformation(info) {
    if (!this.info && info.client_id !== clientMetadataUrl) this.registrations++;
    this.info = info;
  }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(authorizationUrl) {
    const { params, consent } = await follow(authorizationUrl, redirectURL);
    this.authorizations.push({
      scope: authorizationUrl.searchParams.get('scope'),
      resource: authorizationUrl.searchParams.get('resource'),
      client_id: authorizationUrl.searchParams.get('client_id'),
      code_challenge_method: authorizationUrl.searchParams.get('code_challenge_method'),
      iss: params.get('iss'),
      consent,
      error: params.get('error') ?? undefined,
    });
    if (params.get('error')) throw new Error(`authorization error ${params.get('error')}: ${params.get('error_description')}`);
    if (params.get('state') !== authorizationUrl.searchParams.get('state')) throw new Error('state mismatch');
    this.code = params.get('code');
  }
}

const provider = new Provider();
const transportOptions = { authProvider: provider };

// withAuth runs op(); when the SDK stops for authorization
// (UnauthorizedError after redirectToAuthorization), it redeems the code
// with transport.finishAuth and runs op(true).
async function withAuth(transport, op) {
  try {
    return await op();
  } catch (e) {
    const last = provider.authorizations.at(-1);
    if (reregister && last?.error === 'invalid_scope' && !provider.code) {
      out({ step: 'reregister', scope: last.scope });
      provider.info = undefined;
      provider.saved = undefined;
      const result = await auth(provider, { serverUrl: new URL(mcpURL), scope: last.scope });
      if (result !== 'REDIRECT' || !provider.code) throw new Error(`re-registration: auth gave ${result}`);
    } else if (!(e instanceof UnauthorizedError) || !provider.code) {
      throw e;
    }
    const code = provider.code;
    provider.code = undefined;
    await transport.finishAuth(code);
    return await op(true);
  }
}

async function main() {
  const client = new Client({ name: 'ts-sdk-interop', version: '1.0.0' });
  let transport = new StreamableHTTPClientTransport(new URL(mcpURL), transportOptions);
  // The first connection ends at the 401: the transport cannot be started
  // twice, so a second one is made once the code is redeemed.
  await withAuth(transport, async (again) => {
    if (again) {
      transport = new StreamableHTTPClientTransport(new URL(mcpURL), transportOptions);
    }
    await client.connect(transport);
  });
  out({ step: 'connected', server: client.getServerVersion()?.name, client_id: provider.info?.client_id, registrations: provider.registrations });

  const text = (r) => r.content?.map((c) => c.text).join('');
  const r1 = await client.callTool({ name: tool, arguments: tool === 'echo' ? { text: 'hello from TypeScript' } : {} });
  out({ step: 'call', tool, isError: !!r1.isError, text: text(r1) });

  if (stepUpTool) {
    const r2 = await withAuth(transport, () => client.callTool({ name: stepUpTool, arguments: {} }));
    out({ step: 'stepup', tool: stepUpTool, isError: !!r2.isError, text: text(r2) });
  }

  out({ step: 'done', authorizations: provider.authorizations, registrations: provider.registrations, client_id: provider.info?.client_id, scope: provider.saved?.scope });
  await client.close();
}

main().catch((e) => {
  out({ step: 'error', error: String(e?.stack ?? e), authorizations: provider.authorizations, registrations: provider.registrations, refresh_token: !!provider.saved?.refresh_token });
  process.exit(1);
});
