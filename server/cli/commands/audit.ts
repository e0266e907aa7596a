import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { validate } from '../../../policy-schemas/index.ts';
import type { AuditCheckpoint, AuditEvent } from '../../../policy-schemas/types.gen.ts';
import type { TrustedKeys } from '../../../runtime/verify-bundle.ts';
import { ChainVerifier, eventHash } from '../../audit/chain.ts';
import { ChainContradiction, heldCheckpoints, verifyChainAndCheckpoints } from '../../audit/held-checkpoints.ts';
import { canonicalJson } from '../../../runtime/canonical-json.ts';
import { takeCheckpoint } from '../../audit/checkpoints.ts';
import { CheckpointMatcher, readCheckpoints, verifyCheckpointSignature } from '../../audit/checkpoint-verify.ts';
import { auditEventPages } from '../../audit/events.ts';
import { CSV_HEADER, fromCsvRecord, parseCsv, partialExportFilter, toCsvRow, toJsonl } from '../../audit/export.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { KeyStore } from '../../signing/key-store.ts';
import { settingsFromEnv } from '../../startup.ts';
import { readTrustedKeys } from './verify.ts';

const USAGE = [
  'usage: toolgate audit export [--format jsonl|csv] [--out FILE]',
  '       toolgate audit verify [FILE] [--checkpoint CP [--root F --keyset F | --jwks F]]',
  '       toolgate audit checkpoint [--out FILE]',
  '--checkpoint: a checkpoint kept from GET /v1/audit/checkpoints (one, or a list): the export must extend it unchanged',
  'Without FILE the database is verified, held to every checkpoint whose signature verifies (its own and',
  "the mirror directory's audit/checkpoints.jsonl).",
  'Exit status: 0 the chain verifies; 1 it is broken (or nothing to verify); 2 usage;',
  '3 FILE is a partial (filtered) export: each event matches its own hash, but a chain cannot be proven from it.',
].join('\n');

/** `toolgate audit export|verify|checkpoint`. */
export async function run(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'export') return exportAudit(rest);
  if (sub === 'verify') return verifyFile(rest);
  if (sub === 'checkpoint') return checkpoint(rest);
  console.error(USAGE);
  return 2;
}

/** Signs the current head of the chain (or answers the checkpoint already covering it) and prints it. */
async function checkpoint(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' } } });
  const settings = settingsFromEnv();
  const db = new ToolgateDatabase(settings.dbFile);
  try {
    let cp: AuditCheckpoint | null;
    try {
      cp = await takeCheckpoint(db, new KeyStore(settings.keysDir), { mirrorDir: settings.mirrorDir });
    } catch (err) {
      if (!(err instanceof ChainContradiction)) throw err;
      console.log(`BROKEN at seq ${err.broken.seq}: ${err.broken.message}; no checkpoint was signed`);
      return 1;
    }
    if (!cp) {
      console.error('toolgate audit checkpoint: no audit events yet');
      return 1;
    }
    const text = `${JSON.stringify(cp, null, 2)}\n`;
    if (values.out) (await import('node:fs')).writeFileSync(values.out, text);
    else process.stdout.write(text);
    return 0;
  } finally {
    await db.close();
  }
}

async function exportAudit(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { format: { type: 'string', default: 'jsonl' }, out: { type: 'string' } } });
  if (values.format !== 'jsonl' && values.format !== 'csv') {
    console.error('toolgate audit export: --format must be jsonl or csv');
    return 2;
  }
  const out = values.out ? createWriteStream(values.out) : process.stdout;
  const settings = settingsFromEnv();
  const db = new ToolgateDatabase(settings.dbFile);
  try {
    // Every export is anchored by a signed checkpoint of the head it starts from.
    const cp = await takeCheckpoint(db, new KeyStore(settings.keysDir), { mirrorDir: settings.mirrorDir }).catch((err: unknown) => {
      if (!(err instanceof ChainContradiction)) throw err;
      console.error(`warning: no checkpoint signed: the chain is BROKEN at seq ${err.broken.seq}: ${err.broken.message}`);
      return null;
    });
    if (cp) console.error(`checkpoint: seq ${cp.seq}, hash ${cp.hash} (keep it: GET /v1/audit/checkpoints or toolgate audit checkpoint)`);
    if (values.format === 'csv') out.write(CSV_HEADER);
    for await (const page of auditEventPages(db.db)) {
      const ok = out.write(page.map(values.format === 'csv' ? toCsvRow : toJsonl).join(''));
      if (!ok) await new Promise((r) => out.once('drain', r));
    }
  } finally {
    await db.close();
    if (out !== process.stdout) await new Promise<void>((r) => (out as NodeJS.WritableStream).end(() => r()));
  }
  return 0;
}

/**
 * Verifies an export file (JSONL, or CSV by its header), or without FILE the database's own chain,
 * and names the first broken link.
 */
export async function verifyFile(args: string[]): Promise<number> {
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        checkpoint: { type: 'string' },
        root: { type: 'string' },
        keyset: { type: 'string' },
        'keyset-signature': { type: 'string' },
        jwks: { type: 'string' },
      },
    }));
  } catch (err) {
    console.error(`toolgate audit verify: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const file = positionals[0];
  if (positionals.length > 1 || ((values.root || values.keyset || values.jwks) && !values.checkpoint)) {
    console.error(USAGE);
    return 2;
  }
  let matcher: CheckpointMatcher | undefined;
  if (values.checkpoint) {
    let checkpoints: AuditCheckpoint[];
    try {
      checkpoints = readCheckpoints(await readFile(values.checkpoint, 'utf8'), values.checkpoint);
      const trusted: TrustedKeys | undefined =
        values.root || values.keyset || values.jwks
          ? await readTrustedKeys({ root: values.root, keyset: values.keyset, keysetSignature: values['keyset-signature'], jwks: values.jwks })
          : undefined;
      if (trusted) {
        for (const cp of checkpoints) {
          const bad = await verifyCheckpointSignature(cp, trusted);
          if (bad) {
            console.log(`REFUSED: checkpoint at seq ${cp.seq}: ${bad}`);
            return 1;
          }
        }
        console.log(`${checkpoints.length} checkpoint signature(s) verified`);
      } else {
        console.log('checkpoint signatures not checked (give --root with --keyset, or --jwks)');
      }
    } catch (err) {
      console.error(`toolgate audit verify: ${(err as Error).message}`);
      return 1;
    }
    matcher = new CheckpointMatcher(checkpoints);
  }
  if (!file) return verifyDatabase(matcher);
  const verifier = new ChainVerifier();
  const partial = new PartialExportCheck();
  const check = (v: ChainVerifier, parse: () => unknown, line: number) => (partial.filter ? partial.push(parse, line) : pushChecked(v, parse, line, matcher));
  const head = (await readFile(file, { encoding: 'utf8' })).slice(0, 4096);
  const firstLine = head.split(/\r?\n/, 1)[0];
  if (head.startsWith(CSV_HEADER) || head.startsWith('seq,') || Array.isArray(partialCsvFilter(firstLine))) {
    const text = await readFile(file, 'utf8');
    let line = 0;
    let header = false;
    for (const cells of parseCsv(text)) {
      line++;
      if (line === 1 && partialExportFilter(cells)) {
        partial.filter = partialExportFilter(cells);
        continue;
      }
      if (!header) {
        header = true; // the column names
        continue;
      }
      if (!check(verifier, () => fromCsvRecord(cells), line)) break;
    }
  } else {
    const rl = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    let line = 0;
    for await (const text of rl) {
      line++;
      if (!text.trim()) continue;
      if (line === 1 && partialExportFilter(text)) {
        partial.filter = partialExportFilter(text);
        continue;
      }
      if (!check(verifier, () => JSON.parse(text), line)) break;
    }
  }
  if (partial.filter) return partial.report(file, matcher !== undefined);
  return report(verifier, file, matcher);
}

/** The CSV record of a partial export's first line, if that is what `line` is. */
function partialCsvFilter(line: string): (string | null)[] | undefined {
  try {
    const [cells] = [...parseCsv(`${line}\r\n`)];
    return cells && partialExportFilter(cells) ? cells : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A filtered export holds some events of the chain: what can be checked is that each event still
 * matches its own hash, and that events next to each other in the chain still link; that events
 * are missing between them is what a filter does, not a break.
 */
class PartialExportCheck {
  filter: Record<string, unknown> | undefined;
  private count = 0;
  private links = 0;
  private prev: AuditEvent | undefined;
  private broken: string | undefined;

  push(parse: () => unknown, line: number): boolean {
    let event: unknown;
    try {
      event = parse();
    } catch (e) {
      this.broken = `line ${line} is not an audit event: ${(e as Error).message}`;
      return false;
    }
    const v = validate<AuditEvent>('audit-event', event);
    if (!v.ok) {
      this.broken = `line ${line} is not an audit event: ${v.errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`;
      return false;
    }
    const e = v.value;
    if (this.prev && e.seq <= this.prev.seq) this.broken = `event ${e.seq} (line ${line}) follows seq ${this.prev.seq}: events are reordered`;
    else if (eventHash(e) !== e.hash) this.broken = `event ${e.seq} (line ${line}) was altered: its hash does not match its content`;
    else if (this.prev && e.seq === this.prev.seq + 1 && e.prevHash !== this.prev.hash)
      this.broken = `event ${e.seq} (line ${line}) does not link to event ${this.prev.seq} before it`;
    if (this.broken) return false;
    if (this.prev && e.seq === this.prev.seq + 1) this.links++;
    this.count++;
    this.prev = e;
    return true;
  }

  report(file: string, checkpointsGiven: boolean): number {
    const filter = canonicalJson(this.filter ?? {});
    if (this.broken) {
      console.log(`BROKEN (partial export, filter ${filter}): ${this.broken} (${this.count} events before it matched their hashes)`);
      return 1;
    }
    if (checkpointsGiven) console.log('checkpoints not compared: a partial export cannot show that it extends a checkpoint');
    console.log(
      `partial export: ${file} holds ${this.count} events matching the filter ${filter}; each matches its own hash` +
        ` (${this.links} links between consecutive events checked). The chain itself cannot be verified from a partial export: verify a full export or the database.`,
    );
    return 3;
  }
}

async function verifyDatabase(matcher?: CheckpointMatcher): Promise<number> {
  const settings = settingsFromEnv();
  const db = new ToolgateDatabase(settings.dbFile);
  try {
    const held = await heldCheckpoints(db.db, new KeyStore(settings.keysDir), settings.mirrorDir);
    const r = await verifyChainAndCheckpoints(db.db, held);
    if (held.mirrorProblem) console.error(`warning: the mirror's checkpoints were not read: ${held.mirrorProblem}`);
    if (matcher) for await (const page of auditEventPages(db.db)) for (const e of page) matcher.see(e);
    if (r.ok && r.count === 0) {
      console.error('the database: no audit events');
      return 1;
    }
    const cps = r.checkpoints;
    const heldTo = cps
      ? `held to ${cps.verified} signed checkpoint(s)${cps.latest ? `, the latest at seq ${cps.latest.seq} (${cps.latest.at})` : ''}` +
        (cps.unverified ? `; ${cps.unverified} checkpoint(s) ignored: their signature does not verify under the key set` : '')
      : '';
    if (!r.ok) {
      const b = r.firstBroken!;
      const which = b.checkpoint ? ` (checkpoint at seq ${b.checkpoint.seq}, signed at ${b.checkpoint.at})` : '';
      console.log(`BROKEN at seq ${b.seq}: ${b.message}${which} (${r.count} events before it verified; ${heldTo})`);
      return 1;
    }
    return reportIntact(r, matcher, heldTo);
  } finally {
    await db.close();
  }
}

function report(verifier: ChainVerifier, what: string, matcher?: CheckpointMatcher): number {
  const r = verifier.result();
  if (r.ok && r.count === 0) {
    console.error(`${what}: no audit events`);
    return 1;
  }
  if (!r.ok) {
    console.log(`BROKEN at seq ${r.firstBroken!.seq}: ${r.firstBroken!.message} (${r.count} events before it verified)`);
    return 1;
  }
  return reportIntact(r, matcher);
}

/**
 * The closing line of a chain that verified (of the database, with how far its checkpoints hold
 * it; or of an export): with a kept checkpoint to match, a failure unless the chain extends it.
 */
function reportIntact(r: { count: number; lastHash: string }, matcher: CheckpointMatcher | undefined, heldTo?: string): number {
  let extendsWhat: string | undefined;
  if (matcher) {
    const m = matcher.result();
    if (!m.ok) {
      console.log(m.message);
      return 1;
    }
    extendsWhat = `extends ${m.message}`;
  }
  const said = [heldTo, extendsWhat].filter((s) => s !== undefined);
  console.log(`ok: ${r.count} events, chain intact, ${said.length > 0 ? `${said.join(', ')}; ` : ''}last hash ${r.lastHash}`);
  return 0;
}

function pushChecked(verifier: ChainVerifier, parse: () => unknown, line: number, matcher?: CheckpointMatcher): boolean {
  let event: unknown;
  try {
    event = parse();
  } catch (e) {
    verifier.fail(-1, `line ${line} is not an audit event: ${(e as Error).message}`);
    return false;
  }
  const v = validate<AuditEvent>('audit-event', event);
  if (!v.ok) {
    const seq = typeof (event as { seq?: unknown })?.seq === 'number' ? (event as { seq: number }).seq : -1;
    verifier.fail(seq, `line ${line} is not an audit event: ${v.errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`);
    return false;
  }
  if (!verifier.push(v.value, line)) return false;
  matcher?.see(v.value);
  return true;
}
