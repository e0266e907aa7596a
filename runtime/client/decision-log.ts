import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { DecisionBatch, DecisionRecord, EvaluationRequest } from '../../policy-schemas/types.gen.ts';
import type { CallDecision, ToolView } from '../decide.ts';
import { NOT_VISIBLE } from '../evaluate.ts';
import { Backoff } from './backoff.ts';

const gzipAsync = promisify(gzip);

export type DecisionLogOptions = {
  /** Base URL of the Toolgate server. */
  url: string;
  tenant: string;
  /** A `runtime` token for this tenant. */
  token: string;
  /** How this runtime names itself; the same id as in its status reports. */
  runtimeId: string;
  /** Records kept in memory while they wait to be shipped (default 10,000); when full the oldest go. */
  capacity?: number;
  /** How often buffered records are shipped (default 5 s); also as soon as the ring is half full. */
  flushIntervalMs?: number;
  /** Whether records carry the request's facts (default true). */
  logFacts?: boolean;
  fetch?: typeof fetch;
  /** First and largest wait between failed shipments (defaults 1 s and 60 s). */
  backoff?: { initialMs?: number; maxMs?: number };
};

export type DecisionLogStats = {
  /** Records waiting to be shipped (in the ring or in a shipment under way). */
  buffered: number;
  /** Records dropped since the log started because the ring was full. */
  dropped: number;
  /** Records the server accepted. */
  shipped: number;
  /** Records the server refused (a 400 on their batch) or that could never pass its schema. */
  rejected: number;
  /** Why the last shipment failed; null once one succeeds. */
  lastError: string | null;
};

export type DecisionLog = {
  /** Buffers one record: O(1), never awaits, never throws; when the ring is full the oldest is dropped and counted. */
  record(record: DecisionRecord): void;
  /** Buffers what decide() answered, with the view it decided against; turned into a record only when shipped. */
  recordDecision(view: ToolView, toolName: string, decision: CallDecision): void;
  /** Ships everything buffered now; resolves when the server answered (or the attempt failed). */
  flush(): Promise<void>;
  stats(): DecisionLogStats;
  /** Stops the timer and makes one last attempt to ship what is buffered. */
  close(): Promise<void>;
};

/** On the wire a batch stays under 1 MiB compressed; the server also bounds it decompressed. */
export const MAX_BATCH_GZIP_BYTES = 1024 * 1024;
export const MAX_BATCH_JSON_BYTES = 8 * 1024 * 1024;
export const MAX_BATCH_RECORDS = 20_000;
const SHIP_TIMEOUT_MS = 15_000;
const CLOSE_FLUSH_MS = 3_000;

/**
 * One decide() as it happened, kept as references so that record-keeping costs decide() one
 * small object and a clock read: the timestamp, the JSON and the filter reason are worked out
 * only when the record is shipped. The request's fields are taken now, so a caller that moves its
 * request on (a new state, new facts) after deciding does not rewrite what was logged.
 */
class PendingDecision {
  readonly subject: string;
  readonly groups: EvaluationRequest['groups'];
  readonly state: string | undefined;
  readonly profile: string | undefined;
  readonly facts: EvaluationRequest['facts'];

  constructor(
    readonly atMs: number,
    readonly view: ToolView,
    readonly tool: string,
    readonly decision: CallDecision,
  ) {
    const request = view.request;
    this.subject = request.subject;
    this.groups = request.groups;
    this.state = request.state;
    this.profile = request.profile;
    this.facts = request.facts;
  }
}

type Entry = DecisionRecord | PendingDecision;

/**
 * A bounded ring of decision records and the shipper that posts them, gzip-compressed, to
 * `POST /v1/tenants/:tenant/decisions`. Recording never waits on the network: a full ring drops
 * its oldest record and counts it; the count travels with the next batch.
 *
 * @example
 *   const log = createDecisionLog({ url, tenant: 'acme', token, runtimeId: 'worker-1' });
 *   log.record({ at: new Date().toISOString(), toolCallId: 'c1', subject: 'agent:bot', groups: ['default'],
 *     state: 'undefined', tool: 'core__search', decision: 'allow', bundleVersion: 7 });
 */
export function createDecisionLog(options: DecisionLogOptions): DecisionLog {
  return new RingDecisionLog(options);
}

class RingDecisionLog implements DecisionLog {
  private readonly ring: (Entry | undefined)[];
  private readonly capacity: number;
  private readonly half: number;
  private head = 0;
  private count = 0;
  private dropped = 0;
  private shipped = 0;
  private rejected = 0;
  private inFlight = 0;
  private lastError: string | null = null;

  private readonly endpoint: string;
  private readonly fetchFn: typeof fetch;
  private readonly intervalMs: number;
  private readonly logFacts: boolean;
  private readonly backoff: Backoff;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private soonScheduled = false;
  private shipping: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: DecisionLogOptions) {
    this.capacity = Math.max(1, Math.floor(options.capacity ?? 10_000));
    this.half = Math.max(1, Math.floor(this.capacity / 2));
    this.ring = new Array<Entry | undefined>(this.capacity);
    this.endpoint = `${options.url.replace(/\/+$/, '')}/v1/tenants/${encodeURIComponent(options.tenant)}/decisions`;
    this.fetchFn = options.fetch ?? fetch;
    this.intervalMs = Math.max(10, options.flushIntervalMs ?? 5_000);
    this.logFacts = options.logFacts ?? true;
    this.backoff = new Backoff(options.backoff?.initialMs ?? 1_000, options.backoff?.maxMs ?? 60_000);
    this.schedule(this.intervalMs);
  }

  record(record: DecisionRecord): void {
    this.push(record);
  }

  recordDecision(view: ToolView, toolName: string, decision: CallDecision): void {
    this.push(new PendingDecision(Date.now(), view, toolName, decision));
  }

  private push(entry: Entry): void {
    if (this.closed) {
      this.dropped++;
      return;
    }
    const cap = this.capacity;
    if (this.count === cap) {
      // Full: the oldest record gives way to the newest.
      this.ring[this.head] = entry;
      this.head = this.head + 1 === cap ? 0 : this.head + 1;
      this.dropped++;
    } else {
      let at = this.head + this.count;
      if (at >= cap) at -= cap;
      this.ring[at] = entry;
      this.count++;
    }
    if (this.count >= this.half && !this.soonScheduled && !this.failing && !this.shipping) {
      this.soonScheduled = true;
      this.schedule(0);
    }
  }

  stats(): DecisionLogStats {
    return { buffered: this.count + this.inFlight, dropped: this.dropped, shipped: this.shipped, rejected: this.rejected, lastError: this.lastError };
  }

  flush(): Promise<void> {
    if (this.shipping) return this.shipping.then(() => (this.count > 0 ? this.flush() : undefined));
    this.shipping = this.shipAll().finally(() => {
      this.shipping = undefined;
    });
    return this.shipping;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise((r) => (timer = setTimeout(r, CLOSE_FLUSH_MS)))]);
    clearTimeout(timer);
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.soonScheduled = false;
    await this.flush();
    if (this.closed) return;
    // Half full again already (the half-full trigger is off while a shipment is away): ship soon.
    this.schedule(this.failing ? this.backoff.next() : this.count >= this.half ? 0 : this.intervalMs);
  }

  /**
   * Ships what was buffered when it started, batch after batch, until that is shipped or a
   * shipment fails. Records that come in meanwhile wait for the next interval (or for the ring to
   * fill half-way): shipping them at once would turn steady traffic into a stream of small posts,
   * one per round trip, each costing the runtime and the server far more than its records.
   */
  private async shipAll(): Promise<void> {
    let left = this.count;
    for (;;) {
      const taken = this.take(Math.min(MAX_BATCH_RECORDS, left));
      left -= taken.length;
      if (taken.length === 0 && this.dropped === this.droppedReported) return;
      const ok = await this.ship(taken);
      if (!ok || left <= 0 || this.count === 0) return;
    }
  }

  private droppedReported = 0;

  /** Takes up to `max` of the oldest entries out of the ring. */
  private take(max: number): Entry[] {
    const n = Math.min(max, this.count);
    const out = new Array<Entry>(n);
    for (let i = 0; i < n; i++) {
      out[i] = this.ring[this.head] as Entry;
      this.ring[this.head] = undefined;
      this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    }
    this.count -= n;
    this.inFlight += n;
    return out;
  }

  /** Puts a failed shipment back in front of newer records, as far as the ring has room. */
  private putBack(entries: Entry[]): void {
    const room = this.capacity - this.count;
    const keep = Math.min(room, entries.length);
    this.dropped += entries.length - keep;
    for (let i = entries.length - 1; i >= entries.length - keep; i--) {
      this.head = this.head === 0 ? this.capacity - 1 : this.head - 1;
      this.ring[this.head] = entries[i];
      this.count++;
    }
  }

  private async ship(entries: Entry[]): Promise<boolean> {
    const records: DecisionRecord[] = [];
    for (const e of entries) {
      const r = e instanceof PendingDecision ? this.toRecord(e) : fitRecord(e);
      if (r) records.push(r);
      else this.rejected++;
    }
    this.inFlight -= entries.length - records.length;
    const dropped = this.dropped;
    const bodies = await this.encode(records, dropped);
    for (const body of bodies) {
      const outcome = await this.post(body.gz);
      if (outcome === 'retry') {
        // Not accepted: back into the ring, ahead of newer records, to go again after a backoff.
        const rest = records.slice(body.from);
        this.inFlight -= rest.length;
        this.putBack(rest);
        this.failing = true;
        return false;
      }
      const n = body.to - body.from;
      this.inFlight -= n;
      if (outcome === 'ok') this.shipped += n;
      else this.rejected += n;
    }
    this.droppedReported = dropped;
    if (this.failing) this.backoff.reset();
    this.failing = false;
    return true;
  }

  /**
   * Bodies of at most MAX_BATCH_JSON_BYTES of JSON, gzip-compressed to at most
   * MAX_BATCH_GZIP_BYTES; a range that does not fit is split in two until it does.
   */
  private async encode(records: DecisionRecord[], dropped: number): Promise<{ gz: Buffer; from: number; to: number }[]> {
    const out: { gz: Buffer; from: number; to: number }[] = [];
    const pieces = records.map((r) => JSON.stringify(r));
    const prefix = `{"runtimeId":${JSON.stringify(this.options.runtimeId)},"dropped":${dropped},"records":[`;
    const encodeRange = async (from: number, to: number): Promise<void> => {
      const json = `${prefix + pieces.slice(from, to).join(',')}]}`;
      const gz = await gzipAsync(Buffer.from(json));
      if ((gz.length > MAX_BATCH_GZIP_BYTES || Buffer.byteLength(json) > MAX_BATCH_JSON_BYTES) && to - from > 1) {
        const mid = from + Math.floor((to - from) / 2);
        await encodeRange(from, mid);
        await encodeRange(mid, to);
        return;
      }
      out.push({ gz, from, to });
    };
    await encodeRange(0, pieces.length);
    return out;
  }

  /** 'ok' on 2xx; 'refused' when the server says the batch itself is bad; 'retry' otherwise. */
  private async post(gz: Buffer): Promise<'ok' | 'refused' | 'retry'> {
    try {
      const res = await this.fetchFn(this.endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.options.token}`,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        },
        body: new Uint8Array(gz) as Uint8Array<ArrayBuffer>,
        signal: AbortSignal.timeout(SHIP_TIMEOUT_MS),
      });
      const text = await res.text().catch(() => '');
      if (res.ok) {
        this.lastError = null;
        return 'ok';
      }
      this.lastError = `the server answered ${res.status}${problemDetail(text)}`;
      // A batch the server cannot take will never pass: sending it again would only block newer
      // records. 403 too: another token owns this runtime id, or this token may not report here.
      return res.status === 400 || res.status === 403 || res.status === 413 || res.status === 415 ? 'refused' : 'retry';
    } catch (err) {
      this.lastError = `cannot reach the server: ${errorText(err)}`;
      return 'retry';
    }
  }

  /** The wire record of one decide(): the request as evaluated, what was decided, and why. */
  private toRecord(p: PendingDecision): DecisionRecord | undefined {
    const { view, decision } = p;
    const record: DecisionRecord = {
      at: new Date(p.atMs).toISOString(),
      toolCallId: decision.toolCallId,
      subject: p.subject,
      groups: p.groups ?? ['default'],
      state: p.state ?? 'undefined',
      tool: p.tool,
      decision: decision.decision,
      bundleVersion: view.loaded.bundle.version,
      revision: view.loaded.bundle.revision,
    };
    if (p.profile !== undefined) record.profile = p.profile;
    if (this.logFacts && p.facts && Object.keys(p.facts).length > 0) record.facts = p.facts;
    if (decision.errorCode) record.errorCode = decision.errorCode;
    // The constraint that decided, never the arguments it judged.
    if (decision.constraint) record.constraint = decision.constraint;
    if (decision.approval) record.approval = decision.approval;
    if (decision.errorCode === 'policy_denied') {
      const tool = view.loaded.byId.get(p.tool);
      if (tool && view.decisions[tool.pos] === NOT_VISIBLE) {
        const hidden = view.result.filtered.find((f) => f.id === p.tool);
        record.reason = hidden?.reason ?? view.result.rejected?.reason ?? 'not_visible';
      }
    }
    return fitRecord(record);
  }
}

const GROUP = /^(?:\*|[A-Za-z0-9][A-Za-z0-9_.:-]{0,63})$/;
const STATE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
const CODE = /^[a-z][a-z0-9_]{0,63}$/;
// The server's `subject` form (common.schema.json): a host may pass a subject evaluate() accepts
// but the log's schema does not (`user:o'brien@example.com`), and the server refuses a whole
// batch for one such record.
const SUBJECT = /^[^\p{Z}\p{C},"'()#\\]+$/u;
const INSTANT = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})$/i;
const REVISION = /^sha256:[0-9a-f]{64}$/;
const DECISIONS: ReadonlySet<string> = new Set(['allow', 'deny', 'require_approval']);
// Keys every Toolgate body refuses anywhere (they could reshape objects on the server).
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_TEXT = 200;

/** At most MAX_TEXT code points (the schema's maxLength counts code points; a cut pair would leave a lone surrogate). */
function cut(text: string): string {
  if (text.length <= MAX_TEXT) return text;
  const points = [...text];
  return points.length <= MAX_TEXT ? text : points.slice(0, MAX_TEXT).join('');
}

/**
 * The record as the server's schema accepts it: over-long ids and names are cut (a model may
 * call any name), and a record that still could not pass is refused here rather than letting
 * it make the server refuse the whole batch (and with it every other record of the batch).
 */
function fitRecord(r: DecisionRecord): DecisionRecord | undefined {
  if (typeof r.subject !== 'string' || r.subject === '' || typeof r.tool !== 'string' || r.tool === '') return undefined;
  if (typeof r.toolCallId !== 'string' || r.toolCallId === '') return undefined;
  if (typeof r.at !== 'string' || !INSTANT.test(r.at) || !Number.isFinite(Date.parse(r.at))) return undefined;
  if (typeof r.decision !== 'string' || !DECISIONS.has(r.decision)) return undefined;
  if (r.bundleVersion !== null && !(Number.isSafeInteger(r.bundleVersion) && r.bundleVersion >= 1 && r.bundleVersion <= 2147483647)) return undefined;
  if (r.revision !== undefined && (typeof r.revision !== 'string' || !REVISION.test(r.revision))) return undefined;
  if (!Array.isArray(r.groups) || r.groups.length > 64 || !r.groups.every((g) => typeof g === 'string' && GROUP.test(g))) return undefined;
  if (new Set(r.groups).size !== r.groups.length) return undefined;
  if (typeof r.state !== 'string' || !STATE.test(r.state)) return undefined;
  if (r.profile !== undefined && (typeof r.profile !== 'string' || [...r.profile].length > 64)) return undefined;
  if (r.errorCode !== undefined && !CODE.test(r.errorCode)) return undefined;
  if (r.reason !== undefined && !CODE.test(r.reason)) return undefined;
  if (r.facts !== undefined) {
    if (r.facts === null || typeof r.facts !== 'object' || Array.isArray(r.facts)) return undefined;
    const entries = Object.entries(r.facts);
    if (entries.length > 64) return undefined;
    for (const [k, v] of entries) {
      if (FORBIDDEN_KEYS.has(k)) return undefined;
      if (!(typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) return undefined;
    }
  }
  const subject = cut(r.subject);
  if (!SUBJECT.test(subject)) return undefined;
  const tool = cut(r.tool);
  const toolCallId = cut(r.toolCallId);
  if (subject !== r.subject || tool !== r.tool || toolCallId !== r.toolCallId) return { ...r, subject, tool, toolCallId };
  return r;
}

function problemDetail(text: string): string {
  try {
    const p = JSON.parse(text) as { detail?: unknown };
    return typeof p.detail === 'string' ? `: ${p.detail.slice(0, 300)}` : '';
  } catch {
    return '';
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}

export type { DecisionBatch };
