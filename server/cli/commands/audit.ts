import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { validate } from '../../../policy-schemas/index.ts';
import type { AuditEvent } from '../../../policy-schemas/types.gen.ts';
import { ChainVerifier } from '../../audit/chain.ts';
import { auditEventPages, verifyStoredChain } from '../../audit/events.ts';
import { CSV_HEADER, fromCsvRecord, parseCsv, toCsvRow, toJsonl } from '../../audit/export.ts';
import { ToolgateDatabase } from '../../db/database.ts';
import { settingsFromEnv } from '../../startup.ts';

/** `toolgate audit export [--format jsonl|csv] [--out FILE]` and `toolgate audit verify FILE`. */
export async function run(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'export') return exportAudit(rest);
  if (sub === 'verify') return verifyFile(rest);
  console.error('usage: toolgate audit export [--format jsonl|csv] [--out FILE] | toolgate audit verify [FILE]');
  return 2;
}

async function exportAudit(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { format: { type: 'string', default: 'jsonl' }, out: { type: 'string' } } });
  if (values.format !== 'jsonl' && values.format !== 'csv') {
    console.error('toolgate audit export: --format must be jsonl or csv');
    return 2;
  }
  const out = values.out ? createWriteStream(values.out) : process.stdout;
  const db = new ToolgateDatabase(settingsFromEnv().dbFile);
  try {
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
  const file = args[0];
  if (args.length > 1) {
    console.error('usage: toolgate audit verify [FILE]');
    return 2;
  }
  if (!file) return report(await verifyDatabase(), 'the database');
  const verifier = new ChainVerifier();
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
  return report(verifier, file);
}

async function verifyDatabase(): Promise<ChainVerifier> {
  const db = new ToolgateDatabase(settingsFromEnv().dbFile);
  try {
    return await verifyStoredChain(db.db);
  } finally {
    await db.close();
  }
}

function report(verifier: ChainVerifier, what: string): number {
  const r = verifier.result();
  if (r.ok && r.count === 0) {
    console.error(`${what}: no audit events`);
    return 1;
  }
  if (r.ok) {
    console.log(`ok: ${r.count} events, chain intact, last hash ${r.lastHash}`);
    return 0;
  }
  console.log(`BROKEN at seq ${r.firstBroken!.seq}: ${r.firstBroken!.message} (${r.count} events before it verified)`);
  return 1;
}

function check(verifier: ChainVerifier, parse: () => unknown, line: number): boolean {
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
  return verifier.push(v.value, line);
}
