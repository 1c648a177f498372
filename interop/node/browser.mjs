// browser.mjs is the stand-in browser of the interop tests that sign in
// through mcpstack authserver (interop/upstream_test.go): it takes an
// authorization URL to the client's redirect URI, answering our consent
// page with "allow" and following every redirect, the upstream provider's
// included (oidc.mjs signs its user in and consents with no page to fill
// in), keeping cookies as a browser does.
//
// As a module: browse(authURL, redirectPrefix) returns { params, consent, consentHosts }:
// the query of the redirect to redirectPrefix (not visited), whether our
// consent page was shown, and consentHosts: the host:port of each consent
// page answered, in order (two when mcpstack authserver signs in through
// another one).
//
// As a command (mcpstack client --browser-cmd "node browser.mjs"):
//   node browser.mjs URL
// follows URL to the end, the client's loopback redirect included (GET, as
// a browser would), and appends one JSON line {"consent": bool,
// "consent_hosts": [host:port of each consent page answered], "client_id":
// ...} to the file BROWSER_LOG if set.
//
// BROWSER_JAR, if set, is a JSON file holding the cookies across runs: the
// same browser for several clients, as one person's would be.
import { readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The jar: cookies by host:port (stricter than a browser, which ignores
// the port; the servers on 127.0.0.1 set cookies of different names).
function loadJar() {
  const f = process.env.BROWSER_JAR;
  if (!f) return {};
  try { return JSON.parse(readFileSync(f, 'utf8')); } catch { return {}; }
}
function saveJar(jar) {
  if (process.env.BROWSER_JAR) writeFileSync(process.env.BROWSER_JAR, JSON.stringify(jar));
}
function remember(jar, url, res) {
  const host = new URL(url).host;
  jar[host] ??= {};
  for (const c of res.headers.getSetCookie()) {
    const [pair, ...attrs] = c.split(';');
    const i = pair.indexOf('=');
    const name = pair.slice(0, i).trim();
    const gone = attrs.some((a) => /^\s*max-age\s*=\s*(0|-)/i.test(a));
    if (gone) delete jar[host][name];
    else jar[host][name] = pair.slice(i + 1).trim();
  }
}
function cookieHeader(jar, url) {
  return Object.entries(jar[new URL(url).host] ?? {}).map(([k, v]) => `${k}=${v}`).join('; ');
}

// field reads the value of the form field name in html, unescaped.
function field(html, name) {
  const m = new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(html);
  if (!m) return undefined;
  return m[1].replaceAll('&amp;', '&').replaceAll('&#34;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&#43;', '+').replaceAll('&#61;', '=');
}

// browse follows authURL until the redirect to redirectPrefix (returned,
// not visited), or, with no prefix, until a page that is neither a
// redirect nor our consent page (returned as { page }).
export async function browse(authURL, redirectPrefix) {
  const jar = loadJar();
  let consent = false;
  const consentHosts = [];
  let req = { url: new URL(authURL).href, init: { redirect: 'manual' } };
  try {
    for (let hop = 0; hop < 30; hop++) {
      req.init.headers = { ...(req.init.headers ?? {}), cookie: cookieHeader(jar, req.url) };
      const res = await fetch(req.url, req.init);
      remember(jar, req.url, res);
      if (res.status >= 300 && res.status < 400) {
        const next = new URL(res.headers.get('location'), req.url).href;
        if (redirectPrefix && next.startsWith(redirectPrefix)) {
          return { params: new URL(next).searchParams, consent, consentHosts };
        }
        req = { url: next, init: { redirect: 'manual' } };
        continue;
      }
      const html = await res.text();
      const csrf = field(html, 'csrf');
      const request = field(html, 'request');
      if (res.status === 200 && csrf && request) {
        // Our consent page: allow, as the person would.
        consent = true;
        consentHosts.push(new URL(req.url).host);
        const action = /<form[^>]*method="post"[^>]*action="([^"]*)"/.exec(html)?.[1];
        if (!action) throw new Error('consent page without a form');
        const target = new URL(action.replaceAll('&amp;', '&'), req.url);
        req = {
          url: target.href,
          init: {
            method: 'POST',
            redirect: 'manual',
            headers: { 'content-type': 'application/x-www-form-urlencoded', origin: target.origin },
            body: new URLSearchParams({ csrf, request, action: 'allow' }),
          },
        };
        continue;
      }
      if (res.status !== 200 || redirectPrefix) {
        throw new Error(`browsing stopped at ${req.url}: ${res.status} ${html.slice(0, 500)}`);
      }
      return { page: html, consent, consentHosts };
    }
    throw new Error('too many redirects');
  } finally {
    saveJar(jar);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const url = process.argv.at(-1);
  try {
    const { consent, consentHosts } = await browse(url);
    if (process.env.BROWSER_LOG) {
      appendFileSync(process.env.BROWSER_LOG, JSON.stringify({ consent, consent_hosts: consentHosts, client_id: new URL(url).searchParams.get('client_id') }) + '\n');
    }
  } catch (e) {
    console.error(`browser.mjs: ${e?.stack ?? e}`);
    process.exit(1);
  }
}
