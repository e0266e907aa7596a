import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { UsedReceipts } from '../approval-receipt.ts';

/** The single file earlier releases kept the used ids of a tenant in; read once so an upgrade forgets nothing. */
const LEGACY_FORMAT = 'toolgate.used-approvals/v1';
/** How long past its expiry a used id is kept on disk: runtimes sharing a directory may disagree on the time by this much. */
const CLOCK_SKEW_MS = 5 * 60_000;
/** How often a runtime sweeps expired ids out of the directory. */
const SWEEP_EVERY_MS = 60_000;

/**
 * Used approval receipt ids of one tenant, kept in the bundle client's cache directory until each
 * receipt expires, so a runtime that restarts between two uses of one receipt still refuses the
 * second. Each use creates one file named after the receipt id with `O_CREAT | O_EXCL` (`wx`): the
 * file system lets exactly one creator succeed, so of two runtimes sharing the directory (gateway
 * replicas, worker processes) that spend the same receipt at the same instant, one is refused.
 * The file holds the receipt's expiry; an expired one counts as forgotten and is swept away.
 */
export class FileUsedReceipts implements UsedReceipts {
  private readonly folder: string;
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(dir: string, tenant: string) {
    this.folder = join(dir, `${tenant}.used-approvals`);
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    this.importLegacy(join(dir, `${tenant}.used-approvals.json`));
  }

  has(id: string, nowMs: number): boolean {
    const until = this.recorded(this.fileOf(id));
    return until !== undefined && until > nowMs;
  }

  use(id: string, expiresAtMs: number, nowMs: number): boolean {
    this.sweep(nowMs);
    const file = this.fileOf(id);
    if (this.create(file, expiresAtMs)) return true;
    // Someone used it first; a record past its expiry is forgotten (the receipt itself is refused as expired).
    const until = this.recorded(file);
    return until !== undefined && until <= nowMs;
  }

  /** The file that records a receipt id as used: named by the id's sha-256, so no id can name a path. */
  private fileOf(id: string): string {
    return join(this.folder, createHash('sha256').update(id, 'utf8').digest('hex'));
  }

  /** Creates the record, failing when it exists: the one atomic step that decides who spent a receipt. */
  private create(file: string, expiresAtMs: number): boolean {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
    try {
      writeSync(fd, String(expiresAtMs));
    } finally {
      closeSync(fd);
    }
    return true;
  }

  /** The expiry a record holds; none when there is no record; +Infinity when it is being written or unreadable (still used). */
  private recorded(file: string): number | undefined {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return Number.POSITIVE_INFINITY;
    }
    const until = Number(text);
    return text !== '' && Number.isFinite(until) ? until : Number.POSITIVE_INFINITY;
  }

  /** Removes records whose receipts expired (with room for clocks that disagree), at most once a minute. */
  private sweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs < SWEEP_EVERY_MS) return;
    this.lastSweepMs = nowMs;
    for (const name of readdirSync(this.folder)) {
      const file = join(this.folder, name);
      const until = this.recorded(file);
      if (until !== undefined && until + CLOCK_SKEW_MS < nowMs) {
        try {
          unlinkSync(file);
        } catch {
          // Another runtime swept it first.
        }
      }
    }
  }

  /** Records the ids the legacy single file holds, so receipts used before an upgrade stay used. */
  private importLegacy(file: string): void {
    let doc: { format?: unknown; used?: unknown };
    try {
      doc = JSON.parse(readFileSync(file, 'utf8')) as typeof doc;
    } catch {
      return;
    }
    if (doc.format !== LEGACY_FORMAT || typeof doc.used !== 'object' || doc.used === null) return;
    for (const [id, until] of Object.entries(doc.used as Record<string, unknown>)) {
      if (typeof until === 'number') this.create(this.fileOf(id), until);
    }
  }
}
