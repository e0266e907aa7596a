// What holding the audit chain to its own checkpoints costs. The server checks, before signing a
// checkpoint, that every checkpoint whose signature verifies still matches and that the events
// since the latest link to it; `GET /v1/audit/verify` walks the whole chain and holds it to every
// checkpoint. Prints, for 100,000 events with a checkpoint every 1,000: each take, the check before
// signing alone, a whole verify, and the plain chain walk it adds to.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendAuditEvent, verifyStoredChain } from '../../server/audit/events.ts';
import { takeCheckpoint } from '../../server/audit/checkpoints.ts';
import { contradictionBeforeSigning, heldCheckpoints, verifyChainAndCheckpoints } from '../../server/audit/held-checkpoints.ts';
import { ToolgateDatabase } from '../../server/db/database.ts';
import { KeyStore } from '../../server/signing/key-store.ts';

const EVENTS = 100_000;
const EVERY = 1000;
const ms = (t: number) => `${t.toFixed(1)} ms`;

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-audit-bench-'));
  const database = new ToolgateDatabase(join(dir, 'toolgate.db'));
  try {
    await database.migrateToLatest();
    const keys = new KeyStore(join(dir, 'keys'));
    const mirrorDir = join(dir, 'mirror');
    const takes: number[] = [];
    for (let done = 0; done < EVENTS; done += EVERY) {
      await database.change(async (tx) => {
        for (let i = 0; i < EVERY; i++) {
          await appendAuditEvent(tx, { actor: 'system', action: 'update', entityType: 'group', entityId: `g${done + i}`, after: { n: done + i } });
        }
      });
      const [t] = await timed(() => takeCheckpoint(database, keys, { mirrorDir }));
      takes.push(t);
    }
    takes.sort((a, b) => a - b);
    console.log(`${EVENTS} events, ${EVENTS / EVERY} checkpoints (database and mirror file)`);
    console.log(
      `takeCheckpoint after each 1,000 events (checks + signature + mirror append): p50 ${ms(takes[Math.floor(takes.length / 2)])} · max ${ms(takes[takes.length - 1])}`,
    );
    const [warmHeld, held] = await timed(() => heldCheckpoints(database.db, keys, mirrorDir));
    const [check] = await timed(() => contradictionBeforeSigning(database.db, held));
    console.log(`check before signing: held checkpoints read (signatures known) ${ms(warmHeld)}, chain held to them ${ms(check)}`);
    const [walk] = await timed(() => verifyStoredChain(database.db));
    const [full, result] = await timed(() => verifyChainAndCheckpoints(database.db, held));
    console.log(`GET /v1/audit/verify work: chain walk alone ${ms(walk)}, walk + every checkpoint ${ms(full)} (ok: ${result.ok})`);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
