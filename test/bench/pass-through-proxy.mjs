// The least any Node HTTP hop between an MCP client and an HTTP upstream costs, for the gateway
// benchmark to print beside the gateway's own figure: a node:http server that forwards each
// request as it came (method, headers, body) to the upstream over a keep-alive undici pool and
// answers with the upstream's status, headers and body, unread. No policy, no parsing.
// `node pass-through-proxy.mjs UPSTREAM_URL PORT`; prints `listening` when ready.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const [upstreamUrl, port] = process.argv.slice(2);
const upstream = new URL(upstreamUrl);
const pool = new Pool(upstream.origin, { connections: 16 });
// Hop-by-hop headers belong to each connection, not to the message.
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length']);

createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k)) headers[k] = v;
    try {
      const r = await pool.request({ path: upstream.pathname, method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const out = {};
      for (const [k, v] of Object.entries(r.headers)) if (!HOP.has(k)) out[k] = v;
      if (req.method === 'GET') {
        // The client's stream of server notifications: it stays open, so it is passed on as it comes.
        res.writeHead(r.statusCode, out);
        r.body.pipe(res);
        return;
      }
      const body = Buffer.from(await r.body.arrayBuffer());
      out['content-length'] = body.length;
      res.writeHead(r.statusCode, out);
      res.end(body);
    } catch {
      res.writeHead(502).end();
    }
  });
}).listen(Number(port), '127.0.0.1', () => console.log('listening'));
