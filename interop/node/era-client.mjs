// era-client.mjs runs a TypeScript MCP SDK client against an MCP server,
// lists its tools and calls one, and reports the protocol era the client
// settled on, for interop/era_client_test.go.
//
// Usage: node era-client.mjs SDK MODE TARGET [ARGS...]
//
//   SDK     v2  the TypeScript SDK v2 client (@modelcontextprotocol/client
//               2.4.0), whose ClientOptions.versionNegotiation.mode is MODE
//           v1  the TypeScript SDK 1.x client (@modelcontextprotocol/sdk
//               1.32.2), which only speaks the 2025 era; MODE must be legacy
//   MODE    auto    probe with server/discover, fall back to initialize
//           legacy  initialize only (the SDK's default)
//   TARGET  an http:// URL (Streamable HTTP), or "stdio", in which case
//           ARGS are the command line of a stdio server to spawn (its
//           environment is this process's)
//
// The tools called are "echo" with {"text": TEXT} (TEXT from the
// environment, default "interop"), then "ask", which asks the user's name
// by a form elicitation: the client's elicitation/create handler accepts
// with {"name": "Ada"} (in the 2025 era the server sends it as a request;
// in 2026-07-28 the v2 client fulfils the input_required result through
// the same handler and retries). The script prints one JSON line on stdout:
//   {"era": ..., "protocolVersion": ..., "tools": [names], "text": echoed,
//    "asked": ask's text, "serverName": ...}
// or {"error": message} and exits 1.
const [sdk, mode, target, ...args] = process.argv.slice(2);
if (!['v1', 'v2'].includes(sdk) || !['auto', 'legacy'].includes(mode) || !target) {
  console.error('usage: node era-client.mjs v1|v2 auto|legacy URL|stdio [ARGS...]');
  process.exit(2);
}
if (sdk === 'v1' && mode !== 'legacy') {
  console.error('era-client.mjs: the v1 SDK has no version negotiation; use legacy');
  process.exit(2);
}
const text = process.env.TEXT ?? 'interop';
const info = { name: `ts-${sdk}-era-client`, version: '1.0.0' };
// answer is the user's answer to every elicitation.
const answer = { action: 'accept', content: { name: 'Ada' } };

async function load() {
  if (sdk === 'v2') {
    const m = await import('@modelcontextprotocol/client');
    const client = new m.Client(info, { versionNegotiation: { mode }, capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async () => answer);
    let transport;
    if (target === 'stdio') {
      const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
      transport = new StdioClientTransport({ command: args[0], args: args.slice(1), env: process.env });
    } else {
      transport = new m.StreamableHTTPClientTransport(new URL(target));
    }
    return { client, transport };
  }
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const client = new Client(info, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => answer);
  let transport;
  if (target === 'stdio') {
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    transport = new StdioClientTransport({ command: args[0], args: args.slice(1), env: process.env });
    // The 1.x client keeps the initialize result's protocolVersion only by
    // handing it to a transport that has setProtocolVersion (HTTP's);
    // give the stdio transport one, to report it.
    transport.setProtocolVersion = (v) => { transport.protocolVersion = v; };
  } else {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    transport = new StreamableHTTPClientTransport(new URL(target));
  }
  return { client, transport };
}

try {
  const { client, transport } = await load();
  await client.connect(transport);
  // The v1 client has no era: it always speaks the 2025 era.
  const era = typeof client.getProtocolEra === 'function' ? client.getProtocolEra() : 'legacy';
  const protocolVersion = typeof client.getNegotiatedProtocolVersion === 'function'
    ? client.getNegotiatedProtocolVersion()
    : transport.protocolVersion;
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const res = await client.callTool({ name: 'echo', arguments: { text } });
  if (res.isError) throw new Error(`echo failed: ${JSON.stringify(res.content)}`);
  const echoed = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
  const ask = await client.callTool({ name: 'ask', arguments: {} });
  if (ask.isError) throw new Error(`ask failed: ${JSON.stringify(ask.content)}`);
  const asked = ask.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
  const serverName = client.getServerVersion()?.name;
  console.log(JSON.stringify({ era, protocolVersion, tools, text: echoed, asked, serverName }));
  await client.close();
  process.exit(0);
} catch (e) {
  console.log(JSON.stringify({ error: String(e?.stack ?? e) }));
  process.exit(1);
}
