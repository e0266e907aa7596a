import { describe, expect, it } from 'vitest';
import { fetchMcpTools } from '../../server/mcp/client.ts';
import { hostileStdioServer } from '../fixtures/mcp/servers.ts';

// Two passed-through values where one holds the other (a key and the URL that embeds it, a user
// name inside a connection string). Masking the short one first would leave the long one's
// other characters in clear: `pg://app:***@db-x1.lan/prod` still tells a reader
// the host, the user and the database. Every value must disappear whole, whatever the order
// the variables are listed in.
// Short enough that the fixture's tool names (cut at 50 characters) carry each value whole.
const INNER = `pw-${Math.random().toString(36).slice(2, 8)}`;
const OUTER = `pg://app:${INNER}@db-${Math.random().toString(36).slice(2, 6)}.lan/prod`;
const ENV = { HOSTILE_DB_PASSWORD: INNER, HOSTILE_DB_URL: OUTER };
const POLICY = { commands: [process.execPath], allowHosts: [] };

async function listedText(names: string[]): Promise<string> {
  const r = await fetchMcpTools({ id: 'hostile-nested', transport: hostileStdioServer('leak', names) }, { policy: POLICY, env: { ...process.env, ...ENV } });
  if (!r.ok) throw new Error(r.message);
  return JSON.stringify(r.value);
}

function expectNoPieceOf(text: string): void {
  expect(text).not.toContain(INNER);
  expect(text).not.toContain(OUTER);
  // What surrounds the inner value inside the outer one is the outer secret too.
  expect(text).not.toContain('pg://app:');
  expect(text).not.toContain('.lan/prod');
}

describe('a hostile server given one secret that contains another', () => {
  it('masks the longer value whole when the shorter one is listed first', async () => {
    const text = await listedText(['HOSTILE_DB_PASSWORD', 'HOSTILE_DB_URL']);
    expectNoPieceOf(text);
    expect(text).toContain('HOSTILE_DB_URL=***');
  });

  it('masks it whole when the longer one is listed first', async () => {
    expectNoPieceOf(await listedText(['HOSTILE_DB_URL', 'HOSTILE_DB_PASSWORD']));
  });

  it('masks it whole in the error a failed tools/list carries', async () => {
    const r = await fetchMcpTools(
      { id: 'hostile-nested', transport: hostileStdioServer('error', ['HOSTILE_DB_PASSWORD', 'HOSTILE_DB_URL']) },
      { policy: POLICY, env: { ...process.env, ...ENV } },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expectNoPieceOf(r.message);
      expect(r.message).toContain('HOSTILE_DB_URL=***');
    }
  });
});
