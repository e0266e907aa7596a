import type { Bundle, BundleSummary } from '../../policy-schemas/types.gen.ts';
import { bundleMembers, bundleRevision, joinBundleMembers } from '../../runtime/bundle-format.ts';
import { sha256Hex } from '../../runtime/sha256.ts';
import { type Change, type ChangeDeps, type ChangeMeta, runChange } from '../audit/change.ts';
import { lastAuditSeq } from '../audit/events.ts';
import { type ServedBundle, compressBundle, servedBundle } from '../distribution/bundle-cache.ts';
import type { AppDeps } from '../context.ts';
import type { DbOrTx } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { nextTurn } from '../http/event-loop.ts';
import type { KeyStore } from '../signing/key-store.ts';
import { signBundle } from '../signing/sign.ts';
import { bundleRow, insertBundle, latestBundleHead, latestBundleRow, type StoredSummary } from '../store/bundles.ts';
import { loadDraftSnapshot } from '../store/snapshot.ts';
import { snapshotFingerprint } from './snapshot-fingerprint.ts';
import { type Compiler, inlineCompiler } from './compiler.ts';
import { type BundleEnvelope, type CompiledDraft, envelope } from './draft.ts';
import type { GateOutcome } from './tests-gate.ts';

export type PublishOutcome = { created: boolean; version: number; revision: string };

/**
 * The review branch of a publish: `reviewed` ships the compiled content a publish request holds
 * (409 `stale` when the draft no longer compiles to it); `audit` adds who asked and approved (or
 * that an admin published in an emergency) to the publish event; `alongside` writes in the same
 * transaction (the request's decision), so the bundle and the decision commit together.
 */
export type ReviewOptions = {
  reviewed?: { requestId: string; content: string; revision: string };
  audit?: Record<string, unknown>;
  alongside?: (ch: Change, outcome: PublishOutcome) => Promise<void>;
};

type PublishOptions = { rollbackTo?: number; refresh?: boolean; reissue?: boolean; now?: Date } & GateOutcome & ReviewOptions;

/** What the `summary` column holds: the listing's counts plus the envelope, so listing parses no bundle. */

/** Attempts before a publish whose draft keeps changing underneath it gives up with a 409. */
export const PUBLISH_ATTEMPTS = 5;

/** A bundle compiled and signed outside any transaction, with what it was built from. */
type Prepared =
  | { kind: 'unchanged'; version: number; revision: string }
  | {
      kind: 'new';
      /** The latest version when prepared: the new one is exactly the next. */
      basedOn: number;
      /** The hash of the draft snapshot compiled (absent for a rollback or re-issue). */
      snapshotHash?: string;
      /** The last audit event before the snapshot was read: none since means nothing changed. */
      auditSeq: number;
      /** The new version's envelope; the rest of the bundle is in `text` only. */
      head: BundleEnvelope;
      text: string;
      signature: string;
      kid: string;
      summary: BundleSummary;
      /** The signed bytes as served (compressed off the event loop): the cache and mirror take them from here. */
      served: ServedBundle;
    };

/**
 * Compiles the tenant's draft (or takes an earlier version's content for a rollback), signs it
 * and stores it as the next version with one audit event; then wakes long-polling pulls. When
 * the content equals the latest version's, nothing is written and that version is returned,
 * unless `refresh` asks for a new version anyway (same revision, later expiry).
 *
 * Compiling and signing (100+ ms for thousands of tools) happen outside the write transaction,
 * so reads and other changes go on meanwhile; the compile and the summary's diff of a large draft
 * run in the compiler's worker thread, so requests are answered meanwhile too. The transaction then commits only if the draft
 * snapshot still hashes the same and no other version was published; otherwise it starts over,
 * at most PUBLISH_ATTEMPTS times, then answers 409. Versions stay contiguous either way.
 */
export async function publishBundle(
  deps: ChangeDeps & Partial<Pick<AppDeps, 'compiler'>>,
  meta: ChangeMeta,
  tenant: string,
  opts: PublishOptions,
  keys: KeyStore,
): Promise<PublishOutcome> {
  for (let attempt = 1; attempt <= PUBLISH_ATTEMPTS; attempt++) {
    // Callers without a server's compiler (CLI key changes re-issue stored content) compile nothing large.
    // The draft the tests gate read goes into the first attempt only: a later one reads it again.
    const attemptOpts = attempt === 1 ? opts : { ...opts, draft: undefined };
    const prepared = await preparePublish(deps.compiler ?? inlineCompiler(), deps.database.db, tenant, attemptOpts, keys);
    if (prepared.kind === 'unchanged') return { created: false, version: prepared.version, revision: prepared.revision };
    const outcome = await runChange(deps, meta, (ch) => commitPublish(ch, tenant, prepared, meta, opts));
    if (outcome === 'stale') continue;
    // This process's cache and mirror take the signed bytes as they are; other replicas read them.
    deps.cluster?.announce({ type: 'published', tenant, version: outcome.version }, prepared.served);
    return outcome;
  }
  throw new ApiError(
    409,
    'conflict',
    `The draft of ${tenant} changed during each of ${PUBLISH_ATTEMPTS} attempts to publish it; publish again once the edits settle`,
  );
}

/** Reads what to publish and compiles and signs it; runs outside any transaction. */
async function preparePublish(compiler: Compiler, db: DbOrTx, tenant: string, opts: PublishOptions, keys: KeyStore): Promise<Prepared> {
  const issuedAt = (opts.now ?? new Date()).toISOString();
  let auditSeq = await lastAuditSeq(db);
  const latest = await latestBundleRow(db, tenant);
  const version = (latest?.version ?? 0) + 1;
  const previousRevision = latest?.revision ?? null;
  let head: BundleEnvelope;
  let text: string;
  // The catalog's size, which decides where the summary is computed.
  let tools: number;
  let snapshotHash: string | undefined;
  if (opts.rollbackTo !== undefined || opts.reissue) {
    // A re-issue re-signs the latest content with a later expiry; a rollback takes an earlier one's.
    const row = opts.reissue ? latest : await bundleRow(db, tenant, opts.rollbackTo!);
    if (!row) {
      throw new ApiError(
        404,
        'not_found',
        opts.reissue ? `tenant ${tenant} has no published bundle to re-issue` : `bundle version ${opts.rollbackTo} of tenant ${tenant} does not exist`,
        {
          errors: [{ pointer: opts.reissue ? '' : '/rollbackTo', message: 'no such version' }],
        },
      );
    }
    if (!opts.refresh && !opts.reissue && latest && latest.revision === row.revision)
      return { kind: 'unchanged', version: latest.version, revision: latest.revision };
    const old = JSON.parse(row.content) as Bundle;
    const expiresAt = new Date(Date.parse(issuedAt) + old.policy.bundleTtlSeconds * 1000).toISOString();
    const bundle: Bundle = { ...old, version, previousRevision, issuedAt, expiresAt };
    // Each member written once, for the revision check and the text (canonicalising thousands of
    // tools is tens of milliseconds on this thread).
    const members = bundleMembers(bundle);
    if (bundleRevision(members, sha256Hex) !== row.revision) throw new Error(`stored bundle ${tenant}@${row.version} does not hash to its revision`);
    text = joinBundleMembers(members);
    head = { version, revision: row.revision, previousRevision, issuedAt, expiresAt };
    tools = old.catalog.tools.length;
  } else if (opts.reviewed) {
    // The reviewed content, re-enveloped; the draft must still compile to exactly it.
    const snapshot = await loadDraftSnapshot(db, tenant);
    if (!snapshot) throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
    await nextTurn();
    snapshotHash = snapshotFingerprint(snapshot);
    const r = await compiler.compiledOrErrors(snapshot, snapshotHash);
    if ('errors' in r || r.revision !== opts.reviewed.revision) throw staleRequest(tenant, opts.reviewed.requestId);
    if (latest && latest.revision === r.revision) return { kind: 'unchanged', version: latest.version, revision: latest.revision };
    // The draft compiles to exactly the reviewed content (same revision): its compiled members, newly enveloped.
    ({ head, text } = envelope(r, { version, previousRevision, issuedAt }));
    tools = r.tools;
  } else {
    // The draft the policy tests just ran on is read and compiled already: the publish takes it as
    // it is (the commit then checks that nothing changed since it was read) and only writes the
    // new envelope.
    const draft = opts.draft ?? (await readDraft(compiler, db, tenant));
    ({ auditSeq, snapshotHash } = draft);
    const compiled = draft.compiled;
    const revision = compiled.revision;
    if (opts.testedRevision !== undefined && revision !== opts.testedRevision)
      throw new ApiError(409, 'conflict', `The draft of ${tenant} changed while its policy tests ran; publish again`);
    if (!opts.refresh && latest && latest.revision === revision) return { kind: 'unchanged', version: latest.version, revision: latest.revision };
    ({ head, text } = envelope(compiled, { version, previousRevision, issuedAt }));
    tools = compiled.tools;
  }
  // The summary diffs the bundle against the previous one (in the worker for a large catalog) while
  // this thread signs: Ed25519 over the text takes about 10 ms for 2,000 tools, and the signing key
  // stays on the thread that holds the key store instead of being handed to another.
  const summarizing = compiler.summarize({ revision: head.revision, text, tools }, latest ? latest.content : null);
  // The bytes signed are the bytes served: compressed on the thread pool meanwhile.
  const body = Buffer.from(text, 'utf8');
  const compressing = compressBundle(body);
  // Both awaited below; a signing failure must not leave their rejections unhandled meanwhile.
  summarizing.catch(() => undefined);
  compressing.catch(() => undefined);
  const key = await keys.signer();
  // Posting the texts and signing are each about 10 ms for 2,000 tools: a turn between.
  await nextTurn();
  const signature = await signBundle(body, key);
  const summary = await summarizing;
  const served = servedBundle({ tenant, version, revision: head.revision, signature }, await compressing);
  return { kind: 'new', basedOn: latest?.version ?? 0, snapshotHash, auditSeq, head, text, signature, kid: key.kid, summary, served };
}

/** A tenant's draft as a publish reads it: compiled, with what the commit checks it against. */
export type DraftRead = {
  /** The last audit event before the snapshot was read: none since means nothing changed. */
  auditSeq: number;
  /** The hash of the snapshot compiled. */
  snapshotHash: string;
  compiled: CompiledDraft;
};

/** Reads the tenant's draft and compiles it (from the compiler's cache when it was compiled before); 404 for an unknown tenant, 422 when it does not compile. */
export async function readDraft(compiler: Compiler, db: DbOrTx, tenant: string): Promise<DraftRead> {
  const auditSeq = await lastAuditSeq(db);
  const snapshot = await loadDraftSnapshot(db, tenant);
  if (!snapshot) throw new ApiError(404, 'not_found', `tenant ${tenant} does not exist`);
  // Reading thousands of tools and hashing them are each tens of milliseconds: a turn between.
  await nextTurn();
  const snapshotHash = snapshotFingerprint(snapshot);
  return { auditSeq, snapshotHash, compiled: await compiler.compileSnapshot(snapshot, snapshotHash) };
}

/** Inside the write transaction: stores the prepared bundle, or says `stale` when its inputs changed. */
async function commitPublish(
  ch: Change,
  tenant: string,
  p: Extract<Prepared, { kind: 'new' }>,
  meta: ChangeMeta,
  opts: { rollbackTo?: number } & GateOutcome & ReviewOptions,
): Promise<PublishOutcome | 'stale'> {
  const latest = await latestBundleHead(ch.tx, tenant);
  if ((latest?.version ?? 0) !== p.basedOn) return 'stale';
  // Every change writes an audit event in its own transaction: with none since the snapshot was
  // read, the draft is the one compiled. Otherwise the snapshot itself is compared.
  if (p.snapshotHash !== undefined && (await lastAuditSeq(ch.tx)) !== p.auditSeq) {
    const snapshot = await loadDraftSnapshot(ch.tx, tenant);
    if (!snapshot) throw new ApiError(404, 'not_found', `tenant ${tenant} was deleted during the publish`);
    if (snapshotFingerprint(snapshot) !== p.snapshotHash) return 'stale';
  }
  const { head: bundle, summary } = p;
  const stored: StoredSummary = { summary, previousRevision: bundle.previousRevision, issuedAt: bundle.issuedAt, expiresAt: bundle.expiresAt };
  const rollbackOf = opts.rollbackTo ?? null;
  await insertBundle(ch.tx, {
    tenant,
    version: bundle.version,
    revision: bundle.revision,
    content: p.text,
    signature: p.signature,
    kid: p.kid,
    published_by: meta.actor,
    published_at: bundle.issuedAt,
    reason: meta.reason,
    summary: JSON.stringify(stored),
    rollback_of: rollbackOf,
  });
  await ch.record({
    action: rollbackOf === null ? 'publish' : 'rollback',
    entityType: 'bundle',
    entityId: String(bundle.version),
    tenant,
    before: latest ? { version: latest.version, revision: latest.revision } : null,
    after: {
      version: bundle.version,
      revision: bundle.revision,
      kid: p.kid,
      ...(rollbackOf === null ? {} : { rollbackOf }),
      ...(opts.forced ? { forced: opts.forced } : {}),
      ...(opts.audit ?? {}),
      summary,
    },
  });
  const outcome = { created: true, version: bundle.version, revision: bundle.revision };
  if (opts.alongside) await opts.alongside(ch, outcome);
  return outcome;
}

/** The 409 for approving a request whose draft has changed since it was asked. */
export function staleRequest(tenant: string, requestId: string): ApiError {
  return new ApiError(
    409,
    'stale',
    `The draft of ${tenant} changed since publish request ${requestId} was made; nothing was published. Publish again to ask for a review of the draft as it is now.`,
  );
}

/** The 422 for a draft that does not compile, listing every error with its pointer. */
export function compileError(tenant: string, errors: { pointer: string; message: string; code: string }[]): ApiError {
  const first = errors[0];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return new ApiError(422, 'compile_error', `The draft of ${tenant} does not compile: ${first.pointer} ${first.message}${more}`, { errors });
}
