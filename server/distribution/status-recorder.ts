import type { RuntimeStatus } from '../../policy-schemas/types.gen.ts';
import type { ToolgateDatabase } from '../db/database.ts';
import { pruneRuntimes, recordRuntimeStatus } from './runtimes-store.ts';

/** A runtime token can invent runtime ids; the fleet list keeps the most recently heard this many. */
export const MAX_RUNTIMES_PER_TENANT = 10_000;

type Pending = { tenant: string; status: RuntimeStatus; at: string };

/**
 * Runtime status reports, written in batches: a publish makes every runtime report at once, and
 * one durable transaction per report would queue thousands of fsyncs on the event loop. Reports
 * are telemetry, so a report still pending when the process dies is simply sent again later.
 */
export class StatusRecorder {
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly database: ToolgateDatabase,
    private readonly delayMs = 200,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly maxPerTenant = MAX_RUNTIMES_PER_TENANT,
  ) {}

  /** Keeps the report (the newest per runtime wins) and schedules a flush. */
  record(tenant: string, status: RuntimeStatus, at: string): void {
    this.pending.set(`${tenant}\u0000${status.runtimeId}`, { tenant, status, at });
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.delayMs);
      this.timer.unref();
    }
  }

  /** Writes every pending report in one transaction; resolves once they are stored. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.flushing = this.database
      .transaction(async (tx) => {
        // A tenant deleted since its runtime reported takes its reports with it.
        const tenants = [...new Set(batch.map((p) => p.tenant))];
        const live = new Set((await tx.selectFrom('tenants').select('id').where('id', 'in', tenants).execute()).map((r) => r.id));
        for (const p of batch) if (live.has(p.tenant)) await recordRuntimeStatus(tx, p.tenant, p.status, p.at);
        for (const tenant of live) await pruneRuntimes(tx, tenant, this.maxPerTenant);
      })
      .catch((err: unknown) => this.onError(err))
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }
}
