import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryUsedReceipts } from '../approval-receipt.ts';

const FORMAT = 'toolgate.used-approvals/v1';

/**
 * Used approval receipt ids of one tenant, kept in the bundle client's cache directory until each
 * receipt expires, so a runtime that restarts between two uses of one receipt still refuses the
 * second. Written synchronously (decide() is synchronous) and atomically (temp file, rename).
 * Runtimes sharing the directory (gateway replicas, worker processes) read it again before each
 * check and write back the union, so a receipt one of them used is refused by the others (two
 * uses within the same few microseconds on two processes are not told apart: there is no lock).
 */
export class FileUsedReceipts extends MemoryUsedReceipts {
  private readonly file: string;

  constructor(
    private readonly dir: string,
    tenant: string,
  ) {
    super();
    this.file = join(dir, `${tenant}.used-approvals.json`);
    this.load();
  }

  override has(id: string, nowMs: number): boolean {
    // Another runtime sharing the directory (a replica, a worker process) may have used it since.
    this.load();
    return super.has(id, nowMs);
  }

  override use(id: string, expiresAtMs: number, nowMs: number): boolean {
    if (!super.use(id, expiresAtMs, nowMs)) return false;
    this.save();
    return true;
  }

  /** Adds the ids the file holds (what every runtime sharing the directory has used) to those known here. */
  private load(): void {
    try {
      const doc = JSON.parse(readFileSync(this.file, 'utf8')) as { format?: unknown; used?: unknown };
      if (doc.format === FORMAT && typeof doc.used === 'object' && doc.used !== null) {
        for (const [id, until] of Object.entries(doc.used as Record<string, unknown>)) {
          if (typeof until === 'number' && until > (this.used.get(id) ?? Number.NEGATIVE_INFINITY)) this.used.set(id, until);
        }
      }
    } catch {
      // No file yet (or an unreadable one): nothing was used, or nothing can be known; keep what is known here.
    }
  }

  private save(): void {
    mkdirSync(this.dir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ format: FORMAT, used: Object.fromEntries(this.used) }), { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}
