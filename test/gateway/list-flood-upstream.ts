// An MCP server over stdio that floods its client with tools/list_changed: the tool `flood` sends
// `count` notifications at once, and `listings` answers how many tools/list requests it has served.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'list-flood', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
let listings = 0;
server.setRequestHandler(ListToolsRequestSchema, () => {
  listings++;
  return {
    tools: [
      { name: 'flood', inputSchema: { type: 'object', properties: { count: { type: 'integer' } } } },
      { name: 'listings', inputSchema: { type: 'object', properties: {} } },
    ],
  };
});
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name === 'flood') {
    const count = Number(request.params.arguments?.count ?? 0);
    await Promise.all(Array.from({ length: count }, () => server.sendToolListChanged()));
    return { content: [{ type: 'text', text: `sent ${count}` }] };
  }
  return { content: [{ type: 'text', text: String(listings) }] };
});
await server.connect(new StdioServerTransport());
