import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { validate } from '../../../policy-schemas/index.ts';
import type { AuditCheckpoint, AuditEvent } from '../../../policy-schemas/types.gen.ts';
import type { TrustedKeys } from '../../../runtime/verify-bundle.ts';
import { ChainVerifier } from '../../audit/chain.ts';
import { takeCheckpoint } from '../../audit/checkpoints.ts';
import { CheckpointMatcher, readCheckpoints, verifyCheckpointSignature } from '../../audit/checkpoint-verify.ts';
import { auditEventPages, verifyStoredChain } from '../../audit/events.ts';
import { CSV_HEADER, fromCsvRecord, parseCsv, toCsvRow, toJsonl } from '../../audit/export.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { sharedKeyStore } from '../../signing/key-store.ts';
import { settingsFromEnv } from '../../startup.ts';
import { readTrustedKeys } from './verify.ts';

const USAGE = [
  'usage: toolgate audit export [--format jsonl|csv] [--out FILE]',
  '       toolgate audit verify [FILE] [--checkpoint CP [--root F --keyset F | --jwks F]]',
  '       toolgate audit checkpoint [--out FILE]',
  '--checkpoint: a checkpoint kept from GET /v1/audit/checkpoints (one, or a list): the export must extend it unchanged',
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
    const cp = await takeCheckpoint(db, sharedKeyStore(settings.keysDir));
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
    const cp = await takeCheckpoint(db, sharedKeyStore(settings.keysDir));
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
  if (!file) return report(await verifyDatabase(matcher), 'the database', matcher);
  const verifier = new ChainVerifier();
  const check = (v: ChainVerifier, parse: () => unknown, line: number) => pushChecked(v, parse, line, matcher);
  const head = (await readFile(file, { encoding: 'utf8' })).slice(0, CSV_HEADER.length);
  if (head === CSV_HEADER || head.startsWith('seq,')) {
    const text = await readFile(file, 'utf8');
    let line = 1;
    for (const cells of parseCsv(text)) {
      line++;
      if (line === 2) continue; // header
      if (!check(verifier, () => fromCsvRecord(cells), line)) break;
    }
  } else {
    const rl = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    let line = 0;
    for await (const text of rl) {
      line++;
      if (!text.trim()) continue;
      if (!check(verifier, () => JSON.parse(text), line)) break;
    }
  }
  return report(verifier, file, matcher);
}

async function verifyDatabase(matcher?: CheckpointMatcher): Promise<ChainVerifier> {
  const db = new ToolgateDatabase(settingsFromEnv().dbFile);
  try {
    const verifier = await verifyStoredChain(db.db);
    if (matcher) for await (const page of auditEventPages(db.db)) for (const e of page) matcher.see(e);
    return verifier;
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
  if (matcher) {
    const m = matcher.result();
    if (!m.ok) {
      console.log(m.message);
      return 1;
    }
    console.log(`ok: ${r.count} events, chain intact, extends ${m.message}; last hash ${r.lastHash}`);
    return 0;
  }
  console.log(`ok: ${r.count} events, chain intact, last hash ${r.lastHash}`);
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
