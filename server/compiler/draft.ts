import type { Bundle } from '../../policy-schemas/types.gen.ts';
import { type BundleMember, bundleMember, joinBundleMembers } from '../../runtime/bundle-format.ts';
import { loadBundle } from '../../runtime/load-bundle.ts';
import type { LoadedBundle } from '../../runtime/load-bundle.ts';
import { nextTurn } from '../http/event-loop.ts';

/**
 * A draft compiled once (by the Compiler, compiler.ts): the serialised members its text is made of
 * (a publish re-envelopes them, compiling nothing), its revision and bundle lifetime, and, made on
 * first use, the bundle parsed and the bundle as a runtime loads it (a publish needs neither).
 */
export type CompiledDraft = {
  readonly revision: string;
  readonly members: readonly BundleMember[];
  /** The compiled policy's `bundleTtlSeconds`: a new envelope's expiry. */
  readonly ttlSeconds: number;
  /** How many tools the compiled snapshot held: where further work on this bundle runs (compiler.ts). */
  readonly tools: number;
  /** The bundle's canonical text, enveloped as version 1: joined from `members` at each read, not kept beside them. */
  readonly text: string;
  /** The bundle parsed from `text` (about 20 ms for 2,000 tools, made once). */
  readonly bundle: Bundle;
  /** The bundle as a runtime loads it, made once; a turn of the event loop between parsing and loading. */
  loaded(): Promise<LoadedBundle>;
};

/** A compiled draft from what the compiler answered; `bundle` when the caller holds it already (an inline compile). */
export function compiledDraft(c: { revision: string; members: readonly BundleMember[]; ttlSeconds: number; tools: number; bundle?: Bundle }): CompiledDraft {
  // The members are the text in parts: a draft kept by the compiler holds them only, and the whole
  // text (megabytes for thousands of tools) is made for the few reads that need it.
  const text = () => joinBundleMembers(c.members);
  let bundle = c.bundle;
  let loaded: Promise<LoadedBundle> | undefined;
  return {
    revision: c.revision,
    members: c.members,
    ttlSeconds: c.ttlSeconds,
    tools: c.tools,
    get text() {
      return text();
    },
    get bundle() {
      bundle ??= JSON.parse(text()) as Bundle;
      return bundle;
    },
    loaded() {
      // Parsed again, not `bundle`: loading must not share objects with what callers may read or change.
      loaded ??= (async () => {
        const parsed = JSON.parse(text()) as Bundle;
        await nextTurn();
        return loadBundle(parsed);
      })();
      return loaded;
    },
  };
}

/** The fields a new envelope sets: the bundle's identity as stored and listed. */
export type BundleEnvelope = { version: number; revision: string; previousRevision: string | null; issuedAt: string; expiresAt: string };

/**
 * The compiled content under a new envelope (version, previous revision, issue and expiry time):
 * the bundle's exact text, the content's members reused as serialised. The revision names the
 * content only, so it stays.
 */
export function envelope(
  compiled: CompiledDraft,
  e: { version: number; previousRevision: string | null; issuedAt: string },
): { head: BundleEnvelope; text: string } {
  const expiresAt = new Date(Date.parse(e.issuedAt) + compiled.ttlSeconds * 1000).toISOString();
  const fields: Record<string, unknown> = { version: e.version, previousRevision: e.previousRevision, issuedAt: e.issuedAt, expiresAt };
  const head: BundleEnvelope = { version: e.version, revision: compiled.revision, previousRevision: e.previousRevision, issuedAt: e.issuedAt, expiresAt };
  const text = joinBundleMembers(compiled.members.map((m) => (Object.hasOwn(fields, m.key) ? bundleMember(m.key, fields[m.key]) : m)));
  return { head, text };
}
