import { flattenedVerify, importJWK } from 'jose';
import { validate } from '../../policy-schemas/index.ts';
import type { AuditCheckpoint, AuditEvent } from '../../policy-schemas/types.gen.ts';
import { parseDetachedJws } from '../../runtime/detached-jws.ts';
import type { TrustedKeys } from '../../runtime/verify-bundle.ts';
import { describeSafeParse, parseSafeJson } from '../http/safe-json.ts';
import { checkpointBytes } from './checkpoints.ts';
import { CHECKPOINT_JWS_TYP } from '../signing/sign.ts';

/** Checkpoints from a file: one checkpoint, a list, or the `{ items }` of GET /v1/audit/checkpoints. */
export function readCheckpoints(text: string, name: string): AuditCheckpoint[] {
  const parsed = parseSafeJson(text);
  if (!parsed.ok) throw new Error(`${name}: ${describeSafeParse(parsed)}`);
  const doc = parsed.value;
  const list = Array.isArray(doc)
    ? doc
    : doc && typeof doc === 'object' && Array.isArray((doc as { items?: unknown }).items)
      ? (doc as { items: unknown[] }).items
      : [doc];
  if (list.length === 0) throw new Error(`${name} holds no checkpoint`);
  return list.map((c, i) => {
    const v = validate<AuditCheckpoint>('audit-checkpoint', c);
    if (!v.ok) throw new Error(`${name}: checkpoint ${i} is not an audit checkpoint: ${v.errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ')}`);
    return v.value;
  });
}

/** Null when the checkpoint's signature verifies under a key of the key set (retired ones included); otherwise why not. */
export async function verifyCheckpointSignature(cp: AuditCheckpoint, trusted: TrustedKeys): Promise<string | null> {
  const jws = parseDetachedJws(cp.signature, CHECKPOINT_JWS_TYP);
  if (!jws.ok) return jws.message;
  const jwk = trusted.keys.find((k) => k.kid === jws.kid);
  // A key retired since still vouches for what it signed back then: unlike a bundle, a checkpoint
  // is not something a runtime acts on, and the auditor kept it.
  if (!jwk) return `signed by ${jws.kid}, which is not a signing key of the key set`;
  try {
    const key = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: jwk.x }, 'EdDSA');
    await flattenedVerify({ protected: jws.protectedB64, payload: checkpointBytes(cp).toString('base64url'), signature: jws.signatureB64 }, key, {
      algorithms: ['EdDSA'],
    });
    return null;
  } catch {
    return `the signature does not verify under ${jws.kid}`;
  }
}

/**
 * Compares an export, event by event, with kept checkpoints: each checkpoint's seq must be in the
 * export with exactly the checkpoint's hash. Since every hash covers all history before it, a
 * matching checkpoint proves the events up to it unchanged; the first one that does not match
 * bounds the rewrite to the events after the last matching checkpoint, up to its seq.
 */
export class CheckpointMatcher {
  private readonly bySeq = new Map<number, AuditCheckpoint>();
  private lastSeq = 0;
  private firstMismatch: { cp: AuditCheckpoint; got: string } | undefined;
  private lastMatch: AuditCheckpoint | undefined;

  constructor(checkpoints: AuditCheckpoint[]) {
    for (const c of checkpoints) this.bySeq.set(c.seq, c);
  }

  see(e: AuditEvent): void {
    this.lastSeq = e.seq;
    const cp = this.bySeq.get(e.seq);
    if (!cp || this.firstMismatch) return;
    if (cp.hash === e.hash) this.lastMatch = cp;
    else this.firstMismatch = { cp, got: e.hash };
  }

  result(): { ok: true; message: string } | { ok: false; message: string } {
    const seqs = [...this.bySeq.keys()].sort((a, b) => a - b);
    if (this.firstMismatch) {
      const { cp, got } = this.firstMismatch;
      const from = (this.lastMatch?.seq ?? 0) + 1;
      return {
        ok: false,
        message:
          `REWRITTEN at seq ${cp.seq}: the export's event ${cp.seq} hashes to ${got}, but the checkpoint signed at ${cp.at} says ${cp.hash}. ` +
          `History was changed in seq ${from}..${cp.seq}` +
          (this.lastMatch ? ` (it still matches the checkpoint at seq ${this.lastMatch.seq})` : '') +
          '; the export does not extend the checkpoint.',
      };
    }
    const beyond = seqs.filter((s) => s > this.lastSeq);
    if (beyond.length) {
      return {
        ok: false,
        message: `TRUNCATED: the export ends at seq ${this.lastSeq}, before the checkpoint at seq ${beyond[0]}: events it covers are missing.`,
      };
    }
    const last = this.bySeq.get(seqs[seqs.length - 1])!;
    return {
      ok: true,
      message: `${seqs.length === 1 ? 'the checkpoint' : `${seqs.length} checkpoints, the latest`} at seq ${last.seq} (${last.at}) unchanged`,
    };
  }
}
