// ts-server.mjs serves an MCP server written with the TypeScript SDK v2
// (@modelcontextprotocol/server, pinned in package-lock.json) over
// Streamable HTTP on 127.0.0.1, for interop/tsv2_test.go.
//
// Usage: node ts-server.mjs dual|modern
//
//   dual    createMcpHandler's default: revision 2026-07-28 per request, and
//           2025-era traffic (initialize) served statelessly
//   modern  legacy: 'reject': 2026-07-28 only
//
// It prints one JSON line {"url": "http://127.0.0.1:PORT/mcp"} once it
// listens, then serves until killed. Every tool is defined once and served
// to both eras:
//
//   add {a, b}          the sum as text
//   confirm {what}      asks the client to confirm (form elicitation): in a
//                       2026-07-28 request, an InputRequiredResult answered
//                       by a retry with inputResponses; in a 2025 request,
//                       elicitation is unavailable (stateless legacy leg)
//   headed {region}     region is annotated x-mcp-header "Region"; the tool
//                       returns the Mcp-Param-Region header it received
import http from 'node:http';
import {
  McpServer,
  acceptedContent,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
} from '@modelcontextprotocol/server';

const mode = process.argv[2] ?? 'dual';
if (mode !== 'dual' && mode !== 'modern') {
  console.error(`usage: node ts-server.mjs dual|modern`);
  process.exit(2);
}

const obj = (properties, required = Object.keys(properties)) => fromJsonSchema({ type: 'object', properties, required });

function factory({ requestInfo }) {
  const server = new McpServer({ name: 'ts-v2-interop', version: '2.4.0' }, { instructions: 'interop fixture' });
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: obj({ a: { type: 'number' }, b: { type: 'number' } }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'confirm',
    { description: 'Asks the user to confirm', inputSchema: obj({ what: { type: 'string' } }) },
    async ({ what }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'ok');
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            ok: inputRequired.elicit({
              message: `Confirm ${what}?`,
              requestedSchema: { type: 'object', properties: { sure: { type: 'boolean', default: true } } },
            }),
          },
          requestState: 'opaque-state',
        });
      }
      return { content: [{ type: 'text', text: `confirmed ${what}: ${JSON.stringify(answer)}` }] };
    },
  );
  server.registerTool(
    'headed',
    {
      description: 'Mirrors region into a header',
      inputSchema: obj({ region: { type: 'string', 'x-mcp-header': 'Region' } }),
    },
    async () => ({
      content: [{ type: 'text', text: requestInfo?.headers.get('mcp-param-region') ?? '(no header)' }],
    }),
  );
  return server;
}

const handler = createMcpHandler(factory, { legacy: mode === 'modern' ? 'reject' : 'stateless' });

const srv = http.createServer(async (req, res) => {
  try {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
      else if (v !== undefined) headers.set(k, v);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? Buffer.concat(chunks) : undefined,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  } catch (e) {
    console.error(e);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
srv.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${srv.address().port}/mcp` }));
});
