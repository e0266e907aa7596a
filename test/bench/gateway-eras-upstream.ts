// The HTTP upstream of gateway-eras.bench.ts: an MCP server on the official 2.x server SDK
// (createMcpHandler), which answers 2026-07-28 requests statelessly and 2025-11-25 clients through
// its stateless fallback, so one upstream process serves a direct client of either era and the
// gateway alike. Its tools are those of the state file, each echoing its `text` back.
// `node --import tsx gateway-eras-upstream.ts STATE_FILE PORT`; prints `listening` when ready.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import type { UpstreamFixtureState } from '../fixtures/mcp/gateway-upstream.ts';

const [stateFile, port] = process.argv.slice(2);
const state = JSON.parse(readFileSync(stateFile, 'utf8')) as UpstreamFixtureState;

const handler = toNodeHandler(
  createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-upstream', version: '1.0.0' });
    for (const tool of state.tools) {
      server.registerTool(
        tool.name,
        { description: tool.description, inputSchema: fromJsonSchema<{ text: string }>(tool.inputSchema as Parameters<typeof fromJsonSchema>[0]) },
        async (args) => ({ content: [{ type: 'text', text: `echo: ${args.text}` }] }),
      );
    }
    return server;
  }),
);

const http = createServer((req, res) => void handler(req, res));
http.keepAliveTimeout = 65_000;
http.listen(Number(port), '127.0.0.1', () => console.log('listening'));
