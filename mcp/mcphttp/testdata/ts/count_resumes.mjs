// Runs the TypeScript SDK's Streamable HTTP client against the server at
// argv[2] and prints, as JSON, the GETs with Last-Event-ID it sends after
// three finished POST streams: a result, an error answer (an unknown
// tool) and a cancelled request (the tool "block", aborted), waiting
// argv[3] milliseconds for reconnections. The SDK is loaded from the
// directory in TS_SDK_DIR (one holding node_modules/@modelcontextprotocol/sdk).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const sdk = join(process.env.TS_SDK_DIR, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client');
const { Client } = await import(pathToFileURL(join(sdk, 'index.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(join(sdk, 'streamableHttp.js')).href);

const gets = [];
const counting = async (url, init) => {
  const h = new Headers(init?.headers);
  const r = await fetch(url, init);
  if ((init?.method ?? 'GET') === 'GET' && h.get('last-event-id')) gets.push(`${h.get('last-event-id')} ${r.status}`);
  return r;
};
const c = new Client({ name: 'count-resumes', version: '1' });
c.onerror = () => {};
await c.connect(new StreamableHTTPClientTransport(new URL(process.argv[2]), { fetch: counting }));
await c.callTool({ name: 'echo', arguments: {} });
try { await c.callTool({ name: 'no-such-tool', arguments: {} }); } catch {}
const ac = new AbortController();
setTimeout(() => ac.abort(), 300);
try { await c.callTool({ name: 'block', arguments: {} }, undefined, { signal: ac.signal }); } catch {}
await new Promise(r => setTimeout(r, Number(process.argv[3])));
console.log(JSON.stringify({ gets }));
await c.close();
process.exit(0);
