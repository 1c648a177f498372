// oidc.mjs runs node-oidc-provider (the pinned oidc-provider package) as a
// third-party authorization server for mcpstack's interop tests
// (interop/oidc_test.go). It listens on 127.0.0.1 only.
//
// Usage: node oidc.mjs            (environment below)
//   OIDC_PORT       port to listen on (default 0: a free port; the issuer
//                   is http://127.0.0.1:PORT)
//   OIDC_USER       the test user's account id (default "user-1")
//   OIDC_RESOURCES  space-separated resource URIs the server issues tokens for
//                   (RFC 8707); any other resource is refused (invalid_target)
//   OIDC_SCOPES     space-separated scopes every resource server accepts
//                   (default "mcp admin")
//   OIDC_CIMD_TRUST_LOOPBACK=1  let Client ID Metadata Documents be fetched
//                   from loopback (the test serves them on 127.0.0.1 over TLS,
//                   trusted through NODE_EXTRA_CA_CERTS)
//
// When it is ready it prints one line, "ready ISSUER", on stdout.
//
// What is enabled, and why:
//   - Dynamic Client Registration (RFC 7591), open (no initial access token).
//   - Resource indicators (RFC 8707): the access token's audience is the
//     requested resource, and access tokens are JWTs (RFC 9068, typ at+jwt)
//     signed with a fresh ES256 key, published in the issuer's JWKS.
//   - RFC 9207: iss in authorization responses (always on in oidc-provider).
//   - PKCE: S256 only, required (oidc-provider's default).
//   - Client ID Metadata Documents, oidc-provider's experimental feature
//     (acknowledged at the draft version of the pinned release).
//
// Login and consent without a browser: devInteractions is off. The
// interaction URL is a route of ours (/interaction/:uid) that finishes the
// interaction at once: at the login prompt it signs in OIDC_USER, at the
// consent prompt it grants every scope and resource scope the request asks
// for. A user agent that follows redirects and keeps cookies (the stand-in
// browser of the Go tests) therefore goes from the authorization endpoint
// to our route, back to the provider's resume endpoint, through our route
// again for consent when login was the first prompt, and on to
// redirect_uri?code=...&state=...&iss=..., with no page to fill in. (A
// single GET cannot do it: oidc-provider keeps the login in a session
// cookie, and the interaction in another.)
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import Provider, { errors } from 'oidc-provider';

const wantPort = Number(process.env.OIDC_PORT || 0);
if (!Number.isInteger(wantPort) || wantPort < 0) {
  console.error('oidc.mjs: OIDC_PORT must be a port number');
  process.exit(2);
}
// Listen first, so that the issuer names the port actually bound.
const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(wantPort, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;
const user = process.env.OIDC_USER || 'user-1';
const resources = new Set((process.env.OIDC_RESOURCES || '').split(/\s+/).filter(Boolean));
const scopes = process.env.OIDC_SCOPES || 'mcp admin';

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'ES256', use: 'sig' };

const configuration = {
  jwks: { keys: [signingKey] },
  // OAuth scopes of the resource servers come from getResourceServerInfo;
  // these are the OpenID ones the provider itself knows.
  scopes: ['openid', 'offline_access'],
  clientDefaults: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    id_token_signed_response_alg: 'ES256',
  },
  enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
  async findAccount(ctx, sub) {
    return { accountId: sub, async claims() { return { sub }; } };
  },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A request without a resource gets none (no default audience).
      defaultResource(ctx, client, oneOf) {
        return oneOf ?? undefined;
      },
      useGrantedResource() {
        return true;
      },
      async getResourceServerInfo(ctx, resourceIndicator) {
        if (!resources.has(resourceIndicator)) {
          throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
        }
        return {
          scope: scopes,
          audience: resourceIndicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
    clientIdMetadataDocument: {
      enabled: true,
      ack: 'draft-02',
    },
  },
  interactions: {
    url(ctx, interaction) {
      return `/interaction/${interaction.uid}`;
    },
  },
  // The provider's own outgoing requests are Client ID Metadata Document
  // fetches. Its default refuses special-use addresses (loopback among
  // them) to prevent SSRF; the test's document is on 127.0.0.1, so with
  // OIDC_CIMD_TRUST_LOOPBACK=1 that check (the dispatcher it sets) is
  // dropped. Certificates are still verified.
  fetch(url, options) {
    if (process.env.OIDC_CIMD_TRUST_LOOPBACK === '1') {
      delete options.dispatcher;
    }
    return fetch(url, options);
  },
  pkce: { required: () => true },
  ttl: { AccessToken: 300, AuthorizationCode: 60, Grant: 600, Interaction: 600, Session: 600 },
};

const provider = new Provider(issuer, configuration);

// The automatic login and consent described above.
provider.use(async (ctx, next) => {
  const m = /^\/interaction\/([^/]+)$/.exec(ctx.path);
  if (!m || ctx.method !== 'GET') {
    return next();
  }
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: user } };
  } else if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const d = prompt.details;
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, s] of Object.entries(d.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, s.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    result = { error: 'access_denied', error_description: `unexpected prompt ${prompt.name}` };
  }
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
});

provider.on('server_error', (ctx, err) => console.error('oidc.mjs: server_error', err));

server.on('request', provider.callback());
console.log(`ready ${issuer}`);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
