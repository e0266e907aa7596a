// The console also runs this in the browser: no node: modules here.
import type { EvaluationRequest } from '../policy-schemas/types.gen.ts';
import type { Evaluation } from './evaluate.ts';

type Fact = string | number | boolean;

/** One cached answer with copies of the request fields it answers (the caller's objects may change). */
type Entry = {
  readonly groups: readonly string[] | undefined;
  readonly state: string | undefined;
  readonly profile: string | undefined;
  readonly facts: Readonly<Record<string, Fact>>;
  readonly factCount: number;
  readonly allowedConnectionIds: readonly string[] | undefined;
  readonly evaluation: Evaluation;
  /** Epoch ms until which an answer computed at "now" stays right; Infinity for an explicit instant. */
  readonly validUntil: number;
};

// Cached answers hold one entry per tool: bound the cache by entries (about 8 MB of references).
const MAX_CACHED_ENTRIES = 1_000_000;
const MAX_CACHED_RESULTS = 4096;

/** How many answers a bundle of `toolCount` tools caches. */
export function cachedResultsLimit(toolCount: number): number {
  return Math.min(MAX_CACHED_RESULTS, Math.max(64, Math.floor(MAX_CACHED_ENTRIES / (toolCount + 1))));
}

const NO_FACTS: Readonly<Record<string, Fact>> = Object.freeze(Object.create(null));

/**
 * Recent evaluate() answers, found by subject and instant and then by comparing the other request
 * fields, so a cached answer costs two lookups of strings the caller already holds and a few
 * comparisons: no key is built (building and hashing one string of every field cost more than the
 * rest of a cached evaluate). Holds at most `limit` answers, then starts over.
 */
export class EvaluationCache {
  private readonly bySubject = new Map<string, Map<string, Entry[]>>();
  private count = 0;

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.bySubject.clear();
    this.count = 0;
  }

  /** The cached entry answering exactly this request, if any (validity in time is the caller's). */
  get(request: EvaluationRequest): { evaluation: Evaluation; validUntil: number } | undefined {
    const entries = this.bySubject.get(request.subject)?.get(request.at ?? '');
    if (entries === undefined) return undefined;
    for (let i = 0; i < entries.length; i++) if (answers(entries[i], request)) return entries[i];
    return undefined;
  }

  set(request: EvaluationRequest, evaluation: Evaluation, validUntil: number): void {
    if (this.count >= this.limit) this.clear();
    let byAt = this.bySubject.get(request.subject);
    if (byAt === undefined) this.bySubject.set(request.subject, (byAt = new Map()));
    let entries = byAt.get(request.at ?? '');
    if (entries === undefined) byAt.set(request.at ?? '', (entries = []));
    const facts: Record<string, Fact> = request.facts === undefined ? NO_FACTS : Object.assign(Object.create(null), request.facts);
    const entry: Entry = {
      groups: request.groups === undefined ? undefined : [...request.groups],
      state: request.state,
      profile: request.profile,
      facts,
      factCount: Object.keys(facts).length,
      allowedConnectionIds: request.allowedConnectionIds === undefined ? undefined : [...request.allowedConnectionIds],
      evaluation,
      validUntil,
    };
    // An answer that went out of date (a grant expired since) is replaced, not kept beside the new one.
    const stale = entries.findIndex((e) => answers(e, request));
    if (stale >= 0) entries[stale] = entry;
    else {
      entries.push(entry);
      this.count++;
    }
  }
}

function answers(e: Entry, r: EvaluationRequest): boolean {
  return (
    e.state === r.state &&
    e.profile === r.profile &&
    sameList(e.groups, r.groups) &&
    sameList(e.allowedConnectionIds, r.allowedConnectionIds) &&
    sameFacts(e, r.facts)
  );
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Absent facts and {} mean the same. Values compare as JSON scalars: "1" is not 1.
function sameFacts(e: Entry, facts: Readonly<Record<string, Fact>> | undefined): boolean {
  if (facts === undefined) return e.factCount === 0;
  let n = 0;
  for (const name in facts) {
    if (!Object.hasOwn(facts, name)) continue;
    if (!Object.hasOwn(e.facts, name) || e.facts[name] !== facts[name]) return false;
    n++;
  }
  return n === e.factCount;
}
