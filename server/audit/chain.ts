import { createHash } from 'node:crypto';
import type { AuditEvent } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';

/** prevHash of the first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** hash = sha256(prevHash ‖ canonical event without `hash`), lowercase hex. */
export function eventHash(event: Omit<AuditEvent, 'hash'> & { hash?: string }): string {
  const { hash: _ignored, ...rest } = event;
  return createHash('sha256')
    .update(event.prevHash + canonicalJson(rest), 'utf8')
    .digest('hex');
}

export type ChainBreak = { seq: number; reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'seq_gap' | 'malformed'; message: string };

/** Walks a whole chain from seq 1 in order, keeping only what the next link needs: constant memory. */
export class ChainVerifier {
  private prevHash = GENESIS_HASH;
  private prevSeq = 0;
  count = 0;
  firstBroken: ChainBreak | null = null;

  /** Checks one event; returns false once the chain is broken (later events are not checked). */
  push(event: AuditEvent, line?: number): boolean {
    if (this.firstBroken) return false;
    const where = line === undefined ? `event ${event.seq}` : `event ${event.seq} (line ${line})`;
    if (event.seq !== this.prevSeq + 1) {
      this.firstBroken = { seq: event.seq, reason: 'seq_gap', message: `${where} follows seq ${this.prevSeq}: events are missing or reordered` };
    } else if (event.prevHash !== this.prevHash) {
      this.firstBroken = { seq: event.seq, reason: 'prev_hash_mismatch', message: `${where} does not link to the event before it` };
    } else if (eventHash(event) !== event.hash) {
      this.firstBroken = { seq: event.seq, reason: 'hash_mismatch', message: `${where} was altered: its hash does not match its content` };
    }
    if (this.firstBroken) return false;
    this.count++;
    this.prevSeq = event.seq;
    this.prevHash = event.hash;
    return true;
  }

  fail(seq: number, message: string): void {
    if (!this.firstBroken) this.firstBroken = { seq, reason: 'malformed', message };
  }

  result(): { ok: boolean; count: number; firstBroken?: ChainBreak; lastHash: string } {
    return this.firstBroken
      ? { ok: false, count: this.count, firstBroken: this.firstBroken, lastHash: this.prevHash }
      : { ok: true, count: this.count, lastHash: this.prevHash };
  }
}
