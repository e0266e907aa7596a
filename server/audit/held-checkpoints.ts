import type { AuditCheckpoint, AuditVerification } from '../../policy-schemas/types.gen.ts';
import { parseDetachedJws } from '../../runtime/detached-jws.ts';
import type { TrustedKeys } from '../../runtime/verify-bundle.ts';
import type { DbOrTx } from '../db/database.ts';
import { TurnBudget } from '../http/event-loop.ts';
import type { KeyStore } from '../signing/key-store.ts';
import { CHECKPOINT_JWS_TYP } from '../signing/sign.ts';
import { ChainVerifier, eventHash } from './chain.ts';
import { readMirrorCheckpoints } from './checkpoint-mirror.ts';
import { verifyCheckpointSignature } from './checkpoint-verify.ts';
import { auditEventPages, fromRow } from './events.ts';
import { checkpointBytes, listCheckpoints } from './checkpoints.ts';

/**
 * The checkpoints the server holds its own chain to: those in the database and those in the
 * mirror's `audit/checkpoints.jsonl` (kept outside the database, so deleting rows hides nothing),
 * each only if its signature verifies under a key of the key set. A checkpoint that does not
 * verify proves nothing and is counted, not used: anyone who can write the database can add one.
 */
export type HeldCheckpoints = {
  verified: AuditCheckpoint[];
  unverified: number;
  /** The highest seq among the mirror file's lines that verify (0 without one), and why it could not be read. */
  mirrorLatestSeq: number;
  mirrorProblem?: string;
};

export type ChainBreak = NonNullable<AuditVerification['firstBroken']>;

/** Thrown instead of signing a checkpoint over a chain that contradicts an earlier one, or is broken after it. */
export class ChainContradiction extends Error {
  constructor(readonly broken: ChainBreak) {
    super(`the audit chain contradicts its checkpoints: ${broken.message}`);
  }
}

// Signatures that verified, by the public key that verified them, the exact bytes and the signature:
// checking again is pure cost. A pure memo of a fact (an Ed25519 signature verifies under a public
// key or not, for good), so it may live in the module, bounded: a server gets a hit only for a key
// its own key set names. Keyed by the bytes alone, a checkpoint one server's key verified counted
// as verified on another server in the same process whose key set never held that key.
const verifiedSignatures = new Set<string>();
const MAX_REMEMBERED = 100_000;

async function verifiedOnce(cp: AuditCheckpoint, trusted: TrustedKeys): Promise<boolean> {
  const jws = parseDetachedJws(cp.signature, CHECKPOINT_JWS_TYP);
  const jwk = jws.ok ? trusted.keys.find((k) => k.kid === jws.kid) : undefined;
  if (!jwk) return false;
  const memo = `${jwk.x}\u0000${checkpointBytes(cp).toString('utf8')}\u0000${cp.signature}`;
  if (verifiedSignatures.has(memo)) return true;
  const ok = (await verifyCheckpointSignature(cp, trusted)) === null;
  // A key set change could make a signature verify later (a key restored): only successes are kept.
  if (ok) {
    if (verifiedSignatures.size >= MAX_REMEMBERED) verifiedSignatures.clear();
    verifiedSignatures.add(memo);
  }
  return ok;
}

/** Every checkpoint of the database and of the mirror file, sorted by seq, split by whether its signature verifies. */
export async function heldCheckpoints(db: DbOrTx, keys: KeyStore, mirrorDir?: string): Promise<HeldCheckpoints> {
  const all: AuditCheckpoint[] = [];
  for (let cursor = 0; ; ) {
    const page = await listCheckpoints(db, cursor, 1000);
    all.push(...page);
    if (page.length < 1000) break;
    cursor = page[page.length - 1].seq;
  }
  let unverified = 0;
  let mirrorProblem: string | undefined;
  let mirrored: AuditCheckpoint[] = [];
  if (mirrorDir) {
    try {
      const read = readMirrorCheckpoints(mirrorDir);
      mirrored = read.checkpoints;
      all.push(...mirrored);
      unverified += read.malformed;
    } catch (err) {
      // A link where the file should be is not read through; the database's checkpoints still hold.
      mirrorProblem = (err as Error).message;
    }
  }
  // Reading must not make keys (a verify run against an empty keys directory would): with no
  // signing key there, no checkpoint can verify.
  const trusted: TrustedKeys = all.length > 0 && (await keys.list({ create: false })).length > 0 ? { keys: (await keys.keySet()).keySet.keys } : { keys: [] };
  const idOf = (cp: AuditCheckpoint) => `${cp.seq}\u0000${cp.hash}\u0000${cp.at}\u0000${cp.signature}`;
  const seen = new Set<string>();
  const verified: AuditCheckpoint[] = [];
  for (const cp of all) {
    const id = idOf(cp);
    if (seen.has(id)) continue;
    seen.add(id);
    if (await verifiedOnce(cp, trusted)) verified.push(cp);
    else unverified++;
  }
  verified.sort((a, b) => a.seq - b.seq);
  // How far the mirror's file reaches counts only lines that verify: a forged line with a huge seq
  // must not make the catch-up believe the file already holds every real checkpoint.
  const verifiedIds = new Set(verified.map(idOf));
  let mirrorLatestSeq = 0;
  for (const c of mirrored) if (verifiedIds.has(idOf(c))) mirrorLatestSeq = Math.max(mirrorLatestSeq, c.seq);
  return { verified, unverified, mirrorLatestSeq, ...(mirrorProblem ? { mirrorProblem } : {}) };
}

const describe = (cp: AuditCheckpoint) => `the checkpoint at seq ${cp.seq} signed at ${cp.at}`;
const named = (cp: AuditCheckpoint) => ({ seq: cp.seq, hash: cp.hash, at: cp.at });

/**
 * The first checkpoint the stored events contradict: its seq missing (history cut short) or holding
 * another hash (history rewritten, hashes recomputed or not). Since every hash covers all history
 * before it, the rewrite lies after the last checkpoint that still matches, up to this one.
 */
async function firstContradicted(db: DbOrTx, checkpoints: AuditCheckpoint[]): Promise<ChainBreak | null> {
  let lastMatch: AuditCheckpoint | undefined;
  for (let i = 0; i < checkpoints.length; i += 500) {
    const chunk = checkpoints.slice(i, i + 500);
    const rows = await db
      .selectFrom('audit_events')
      .select(['seq', 'hash'])
      .where(
        'seq',
        'in',
        chunk.map((c) => c.seq),
      )
      .execute();
    const stored = new Map(rows.map((r) => [r.seq, r.hash]));
    for (const cp of chunk) {
      const hash = stored.get(cp.seq);
      if (hash === cp.hash) {
        lastMatch = cp;
        continue;
      }
      const from = (lastMatch?.seq ?? 0) + 1;
      if (hash === undefined) {
        return {
          seq: cp.seq,
          reason: 'truncated',
          message: `event ${cp.seq} is missing, but ${describe(cp)} covers it: events were removed after seq ${from - 1}`,
          checkpoint: named(cp),
        };
      }
      return {
        seq: cp.seq,
        reason: 'checkpoint_mismatch',
        message:
          `event ${cp.seq} hashes to ${hash}, but ${describe(cp)} says ${cp.hash}: history was rewritten in seq ${from}..${cp.seq}` +
          (lastMatch ? ` (it still matches the checkpoint at seq ${lastMatch.seq})` : ''),
        checkpoint: named(cp),
      };
    }
  }
  return null;
}

/**
 * What `GET /v1/audit/verify` and `toolgate audit verify` answer for the database: the chain walked
 * from seq 1 (the first broken link), then held against every checkpoint whose signature verifies.
 */
export async function verifyChainAndCheckpoints(db: DbOrTx, held: HeldCheckpoints): Promise<AuditVerification> {
  const verifier = new ChainVerifier();
  // Hashing a page of large events takes a while: other requests get a turn within pages too.
  const budget = new TurnBudget();
  walk: for await (const page of auditEventPages(db)) {
    for (const e of page) {
      if (!verifier.push(e)) break walk;
      await budget.yieldIfDue();
    }
  }
  const chain = verifier.result();
  const latest = held.verified[held.verified.length - 1];
  const checkpoints = { verified: held.verified.length, unverified: held.unverified, ...(latest ? { latest: named(latest) } : {}) };
  if (!chain.ok) return { ...chain, checkpoints };
  const contradicted = await firstContradicted(db, held.verified);
  if (!contradicted) return { ...chain, checkpoints };
  // Only what the last matching checkpoint proves unchanged counts as verified.
  const proven = held.verified.filter((c) => c.seq < contradicted.seq).pop();
  return { ok: false, count: proven?.seq ?? 0, lastHash: proven?.hash ?? '0'.repeat(64), firstBroken: contradicted, checkpoints };
}

/**
 * Before signing a new head: every held checkpoint must still match, and the events after the
 * latest one must link to it unchanged, up to the head. Costs a lookup per checkpoint and a walk of
 * the events since the latest one (at most about 1,000), not of the whole history.
 */
export async function contradictionBeforeSigning(db: DbOrTx, held: HeldCheckpoints): Promise<ChainBreak | null> {
  const contradicted = await firstContradicted(db, held.verified);
  if (contradicted) return contradicted;
  const latest = held.verified[held.verified.length - 1];
  let prevSeq = latest?.seq ?? 0;
  let prevHash = latest?.hash ?? '0'.repeat(64);
  for (;;) {
    const rows = await db.selectFrom('audit_events').selectAll().where('seq', '>', prevSeq).orderBy('seq').limit(1000).execute();
    for (const row of rows) {
      const e = fromRow(row);
      const where = `event ${e.seq}${latest ? `, after ${describe(latest)},` : ''}`;
      if (e.seq !== prevSeq + 1) return { seq: e.seq, reason: 'seq_gap', message: `${where} follows seq ${prevSeq}: events are missing or reordered` };
      if (e.prevHash !== prevHash) return { seq: e.seq, reason: 'prev_hash_mismatch', message: `${where} does not link to the event before it` };
      if (eventHash(e) !== e.hash) return { seq: e.seq, reason: 'hash_mismatch', message: `${where} was altered: its hash does not match its content` };
      prevSeq = e.seq;
      prevHash = e.hash;
    }
    if (rows.length < 1000) return null;
  }
}
