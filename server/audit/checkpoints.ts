import type { AuditCheckpoint } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import type { AppDeps } from '../context.ts';
import type { DbOrTx, ToolgateDatabase } from '../db/database.ts';
import type { AuditCheckpointsRow } from '../db/tables/audit-checkpoints.ts';
import type { KeyStore } from '../signing/key-store.ts';
import { signCheckpoint } from '../signing/sign.ts';

export const CHECKPOINT_FORMAT = 'toolgate.audit-checkpoint/v1';
/** A checkpoint is due after this many events … */
export const CHECKPOINT_EVERY_EVENTS = 1000;
/** … or this long after the last one when anything changed since. */
export const CHECKPOINT_EVERY_MS = 10 * 60_000;

/** The exact bytes a checkpoint signature covers: RFC 8785 JSON of `{ format, seq, hash, at }`. */
export function checkpointBytes(c: Pick<AuditCheckpoint, 'seq' | 'hash' | 'at'>): Buffer {
  return Buffer.from(canonicalJson({ format: CHECKPOINT_FORMAT, seq: c.seq, hash: c.hash, at: c.at }), 'utf8');
}

function fromRow(r: AuditCheckpointsRow): AuditCheckpoint {
  return { format: CHECKPOINT_FORMAT, seq: r.seq, hash: r.hash, at: r.at, signature: r.signature };
}

/**
 * Signs the current head of the audit chain with the key that signs bundles (an active key of the
 * key set) and keeps it. Answers the existing checkpoint when the head has not moved since, and
 * null while the log is empty.
 */
export async function takeCheckpoint(database: ToolgateDatabase, keys: KeyStore, now = new Date()): Promise<AuditCheckpoint | null> {
  const head = await database.db.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  if (!head) return null;
  const existing = await database.db.selectFrom('audit_checkpoints').selectAll().where('seq', '=', head.seq).executeTakeFirst();
  if (existing) return fromRow(existing);
  const key = await keys.signer();
  const at = now.toISOString();
  const signature = await signCheckpoint(checkpointBytes({ seq: head.seq, hash: head.hash, at }), key);
  // Another process may checkpoint the same head at the same moment: the first one stays.
  await database.change((tx) =>
    tx
      .insertInto('audit_checkpoints')
      .values({ seq: head.seq, hash: head.hash, at, kid: key.kid, signature })
      .onConflict((oc) => oc.column('seq').doNothing())
      .execute(),
  );
  const row = await database.db.selectFrom('audit_checkpoints').selectAll().where('seq', '=', head.seq).executeTakeFirstOrThrow();
  return fromRow(row);
}

/** Checkpoints, newest first, before `cursor` (a seq; 0 = from the newest). */
export async function listCheckpoints(db: DbOrTx, cursor: number, limit: number): Promise<AuditCheckpoint[]> {
  let q = db.selectFrom('audit_checkpoints').selectAll();
  if (cursor > 0) q = q.where('seq', '<', cursor);
  return (await q.orderBy('seq', 'desc').limit(limit).execute()).map(fromRow);
}

const appendListeners = new WeakMap<ToolgateDatabase, (seq: number) => void>();

/** Called after a change commits audit events, so the 1,000-event rule needs no polling. */
export function noteAuditAppended(database: ToolgateDatabase, seq: number): void {
  appendListeners.get(database)?.(seq);
}

/**
 * Takes a checkpoint whenever 1,000 events have been appended since the last one, and every 10
 * minutes when anything changed. Returns a function that stops it.
 */
export function startCheckpointScheduler(
  deps: Pick<AppDeps, 'database' | 'logger'>,
  keys: KeyStore,
  options: { everyMs?: number; everyEvents?: number } = {},
): () => Promise<void> {
  const everyEvents = options.everyEvents ?? CHECKPOINT_EVERY_EVENTS;
  let lastSeq: number | undefined;
  let running: Promise<void> = Promise.resolve();
  let queued = false;
  const take = () => {
    if (queued) return;
    queued = true;
    running = running
      .then(async () => {
        queued = false;
        const cp = await takeCheckpoint(deps.database, keys);
        if (cp) lastSeq = cp.seq;
      })
      .catch((err: unknown) => deps.logger.error({ err: { message: (err as Error).message } }, 'could not take an audit checkpoint'));
  };
  const known = async () => {
    if (lastSeq === undefined)
      lastSeq = (await deps.database.db.selectFrom('audit_checkpoints').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirst())?.seq ?? 0;
    return lastSeq;
  };
  appendListeners.set(deps.database, (seq) => {
    void known().then((last) => {
      if (seq - last >= everyEvents) take();
    });
  });
  // Every interval: a checkpoint if the head moved (takeCheckpoint answers the old one otherwise).
  const timer = setInterval(take, options.everyMs ?? CHECKPOINT_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    appendListeners.delete(deps.database);
    await running;
  };
}
