import type { AuditCheckpoint } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';
import type { AppDeps } from '../context.ts';
import type { DbOrTx, ToolgateDatabase } from '../db/database.ts';
import type { AuditCheckpointsRow } from '../db/tables/audit-checkpoints.ts';
import type { KeyStore } from '../signing/key-store.ts';
import { signCheckpoint } from '../signing/sign.ts';
import { appendMirrorCheckpoints } from './checkpoint-mirror.ts';
import { ChainContradiction, contradictionBeforeSigning, type HeldCheckpoints, heldCheckpoints } from './held-checkpoints.ts';

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

/** Where a checkpoint is kept besides the database, and who hears of trouble. */
export type CheckpointOptions = { now?: Date; mirrorDir?: string; logger?: { error(details: object, message: string): void } };

/**
 * Signs the current head of the audit chain with the key that signs bundles (an active key of the
 * key set) and keeps it, in the database and, with a mirror directory, appended to its
 * `audit/checkpoints.jsonl`. Answers the existing checkpoint when the head has not moved since,
 * and null while the log is empty.
 *
 * The server holds itself to its own checkpoints: when the stored chain contradicts one whose
 * signature verifies (history rewritten or cut short), or is broken after the latest, it signs
 * nothing, logs the break and throws ChainContradiction: a new checkpoint would vouch for a forgery.
 */
export async function takeCheckpoint(database: ToolgateDatabase, keys: KeyStore, options: CheckpointOptions = {}): Promise<AuditCheckpoint | null> {
  const head = await database.db.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  if (!head) return null;
  const existing = await database.db.selectFrom('audit_checkpoints').selectAll().where('seq', '=', head.seq).executeTakeFirst();
  const held = await heldCheckpoints(database.db, keys, options.mirrorDir);
  if (held.mirrorProblem) options.logger?.error({ problem: held.mirrorProblem }, 'audit checkpoints of the mirror directory not read');
  const broken = await contradictionBeforeSigning(database.db, held);
  if (broken) {
    options.logger?.error({ firstBroken: broken }, 'audit chain contradicts its checkpoints: no checkpoint signed');
    throw new ChainContradiction(broken);
  }
  if (existing) {
    const cp = fromRow(existing);
    mirrorBehind(options, held, null);
    return cp;
  }
  const key = await keys.signer();
  const at = (options.now ?? new Date()).toISOString();
  const signature = await signCheckpoint(checkpointBytes({ seq: head.seq, hash: head.hash, at }), key);
  // Another process may checkpoint the same head at the same moment: the first one stays.
  const inserted = await database.change((tx) =>
    tx
      .insertInto('audit_checkpoints')
      .values({ seq: head.seq, hash: head.hash, at, kid: key.kid, signature })
      .onConflict((oc) => oc.column('seq').doNothing())
      .returning('seq')
      .executeTakeFirst(),
  );
  const row = await database.db.selectFrom('audit_checkpoints').selectAll().where('seq', '=', head.seq).executeTakeFirstOrThrow();
  const cp = fromRow(row);
  // The process that signed it writes it outside the database too.
  mirrorBehind(options, held, inserted ? cp : null);
  return cp;
}

/**
 * Appends to the mirror's file what it lacks: the checkpoint just signed here, and verified ones
 * newer than its last line (signed before the mirror was set up, or when a write failed). A failed
 * write is logged, never fatal: the checkpoint is in the database, and the next take catches up.
 */
function mirrorBehind(options: CheckpointOptions, held: HeldCheckpoints, signed: AuditCheckpoint | null): void {
  if (!options.mirrorDir || held.mirrorProblem) {
    if (options.mirrorDir && signed) options.logger?.error({ seq: signed.seq }, 'audit checkpoint not written to the mirror directory');
    return;
  }
  const missing = held.verified.filter((c) => c.seq > held.mirrorLatestSeq && c.seq !== signed?.seq);
  const lines = signed ? [...missing, signed] : missing;
  try {
    appendMirrorCheckpoints(options.mirrorDir, lines);
  } catch (err) {
    options.logger?.error({ err: { message: (err as Error).message } }, 'audit checkpoint not written to the mirror directory');
  }
}

/** Checkpoints, newest first, before `cursor` (a seq; 0 = from the newest). */
export async function listCheckpoints(db: DbOrTx, cursor: number, limit: number): Promise<AuditCheckpoint[]> {
  let q = db.selectFrom('audit_checkpoints').selectAll();
  if (cursor > 0) q = q.where('seq', '<', cursor);
  return (await q.orderBy('seq', 'desc').limit(limit).execute()).map(fromRow);
}

/**
 * Takes a checkpoint whenever 1,000 events have been appended since the last one (as the server's
 * cluster events tell, from every replica: no polling), and every 10 minutes when anything
 * changed. Returns a function that stops it.
 */
export function startCheckpointScheduler(
  deps: Pick<AppDeps, 'database' | 'logger' | 'cluster'> & { config?: Pick<AppDeps['config'], 'mirrorDir'> },
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
        const cp = await takeCheckpoint(deps.database, keys, { mirrorDir: deps.config?.mirrorDir, logger: deps.logger });
        if (cp) lastSeq = cp.seq;
      })
      .catch((err: unknown) => {
        // A contradiction was logged where it was found; the next tick looks again.
        if (!(err instanceof ChainContradiction)) deps.logger.error({ err: { message: (err as Error).message } }, 'could not take an audit checkpoint');
      });
  };
  const known = async () => {
    if (lastSeq === undefined)
      lastSeq = (await deps.database.db.selectFrom('audit_checkpoints').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirst())?.seq ?? 0;
    return lastSeq;
  };
  const stopListening = deps.cluster.onAuditAppended((seq) => {
    void known().then((last) => {
      if (seq - last >= everyEvents) take();
    });
  });
  // Every interval: a checkpoint if the head moved (takeCheckpoint answers the old one otherwise).
  const timer = setInterval(take, options.everyMs ?? CHECKPOINT_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    stopListening();
    await running;
  };
}
