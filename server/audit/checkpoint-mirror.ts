import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { validate } from '../../policy-schemas/index.ts';
import type { AuditCheckpoint } from '../../policy-schemas/types.gen.ts';
import { canonicalJson } from '../../runtime/canonical-json.ts';

/** Where checkpoints are kept outside the database, under the static mirror's directory. */
export const MIRROR_CHECKPOINTS_FILE = join('audit', 'checkpoints.jsonl');

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** A link where the checkpoint file or its folder should be: refused, never followed. */
export class MirrorLinkError extends Error {}

/**
 * `<mirror>/audit`, made if missing; a link (or anything but a folder) there is refused, so a
 * checkpoint is never written somewhere the link points to.
 */
function auditFolder(mirrorDir: string): string {
  const dir = join(mirrorDir, 'audit');
  mkdirSync(dir, { recursive: true });
  const st = lstatSync(dir);
  if (st.isSymbolicLink() || !st.isDirectory()) throw new MirrorLinkError(`${dir} is a link or not a folder: audit checkpoints are not written through it`);
  return dir;
}

/** Opens the checkpoint file without following a link at its name (O_NOFOLLOW), and only if it is a regular file. */
function openCheckpointFile(mirrorDir: string, flags: number): number | null {
  const file = join(auditFolder(mirrorDir), 'checkpoints.jsonl');
  let fd: number;
  try {
    fd = openSync(file, flags | NOFOLLOW, 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP' || code === 'EMLINK') throw new MirrorLinkError(`${file} is a link: audit checkpoints are not written through it`);
    throw err;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new MirrorLinkError(`${file} is not a regular file`);
  }
  return fd;
}

/**
 * Appends checkpoints to `<mirror>/audit/checkpoints.jsonl`, one canonical JSON line each, in one
 * write of an O_APPEND descriptor: a reader or another replica appending sees whole lines.
 */
export function appendMirrorCheckpoints(mirrorDir: string, checkpoints: AuditCheckpoint[]): void {
  if (checkpoints.length === 0) return;
  const fd = openCheckpointFile(mirrorDir, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT);
  if (fd === null) throw new Error(`could not create ${join(mirrorDir, MIRROR_CHECKPOINTS_FILE)}`);
  try {
    const bytes = Buffer.from(checkpoints.map((c) => `${canonicalJson(c)}\n`).join(''), 'utf8');
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
  } finally {
    closeSync(fd);
  }
}

/** The checkpoints of the mirror's file (none when there is no file), and how many lines are not checkpoints. */
export function readMirrorCheckpoints(mirrorDir: string): { checkpoints: AuditCheckpoint[]; malformed: number } {
  const fd = openCheckpointFile(mirrorDir, constants.O_RDONLY);
  if (fd === null) return { checkpoints: [], malformed: 0 };
  let text: string;
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    text = buf.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
  const checkpoints: AuditCheckpoint[] = [];
  let malformed = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch {
      malformed++;
      continue;
    }
    const v = validate<AuditCheckpoint>('audit-checkpoint', doc);
    if (v.ok) checkpoints.push(v.value);
    else malformed++;
  }
  return { checkpoints, malformed };
}
