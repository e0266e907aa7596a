import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/**
 * The configuration directory's files, read and written without ever following a symbolic link:
 * a directory cloned from a repository may hold links (to `~/.ssh`, to `/etc`), and export and
 * apply must touch nothing outside it. The directory named by `--dir` may itself be a link (the
 * operator chose it, and on some systems `/tmp` is one): it is resolved once, and every path
 * below it is checked with lstat, opened with O_NOFOLLOW and written by rename, so a link is
 * refused by name rather than followed, and a file is replaced rather than written through.
 */

/** A path under the directory that export or apply refuses to touch, and why. */
export type ContainmentProblem = { path: string; message: string };

/** Thrown by the write helpers when a path would leave the directory. */
export class ContainmentError extends Error {
  constructor(readonly problem: ContainmentProblem) {
    super(`${problem.path}: ${problem.message}`);
  }
}

export const LINK_REFUSED = 'is a symbolic link; export and apply never follow links in the configuration directory';
const NOT_REGULAR = 'is neither a regular file nor a folder (a device, socket or pipe); export and apply read only regular files';
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** The real path of the directory itself (it may be a link); undefined when it is not a directory. */
export function resolveDir(dir: string): string | undefined {
  try {
    const real = realpathSync(dir);
    return lstatSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every regular file under the given top-level folders of `root` (relative, with `/`, sorted),
 * and every link or special file met on the way, which is never entered. Names starting with a
 * dot (`.git`, editor files) are skipped, except `.json` files: a grant id may start with a dot.
 */
export function scanFiles(root: string, folders: readonly string[]): { files: string[]; problems: ContainmentProblem[] } {
  const files: string[] = [];
  const problems: ContainmentProblem[] = [];
  const visit = (rel: string, top: boolean) => {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(join(root, rel));
    } catch {
      return; // A top-level folder that does not exist, or a name gone meanwhile.
    }
    if (st.isSymbolicLink()) problems.push({ path: rel, message: LINK_REFUSED });
    else if (st.isDirectory()) for (const name of readdirSync(join(root, rel)).sort()) visitChild(`${rel}/${name}`, name);
    else if (top) problems.push({ path: rel, message: 'is not a folder' });
    else if (st.isFile()) files.push(rel);
    else problems.push({ path: rel, message: NOT_REGULAR });
  };
  const visitChild = (rel: string, name: string) => {
    if (name.startsWith('.') && !name.endsWith('.json')) return;
    visit(rel, false);
  };
  for (const f of folders) visit(f, true);
  return { files, problems };
}

/** Reads a regular file under root; a link at any level is refused (O_NOFOLLOW on the file itself). */
export function readContained(root: string, rel: string): string {
  checkFolders(root, rel, false);
  let fd: number;
  try {
    // O_NONBLOCK: a named pipe swapped in after the scan would otherwise hold the open until a
    // writer comes; it is opened at once and refused below (a regular file reads as without it).
    fd = openSync(join(root, rel), constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new ContainmentError({ path: rel, message: LINK_REFUSED });
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) throw new ContainmentError({ path: rel, message: NOT_REGULAR });
    assertOpenedInside(fd, root, rel);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a file under root: its folders are made one at a time (a link among them is refused),
 * and the bytes go to a new file that then replaces the old name, so an existing link or hard
 * link at that name is replaced, never written through.
 */
export function writeContained(root: string, rel: string, bytes: string): void {
  checkFolders(root, rel, true);
  const target = join(root, rel);
  const existing = lstatOrUndefined(target);
  if (existing?.isSymbolicLink()) throw new ContainmentError({ path: rel, message: LINK_REFUSED });
  if (existing && !existing.isFile()) throw new ContainmentError({ path: rel, message: NOT_REGULAR });
  const slash = rel.lastIndexOf('/');
  const temp = join(root, `${rel.slice(0, slash + 1)}.${rel.slice(slash + 1)}.${randomBytes(6).toString('hex')}.tmp`);
  // O_CREAT|O_EXCL never follows a link at the name, and fails rather than reuse a name.
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o644);
  try {
    assertOpenedInside(fd, root, rel);
    writeFileSync(fd, bytes);
  } catch (err) {
    closeSync(fd);
    removeQuietly(temp);
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(temp, target);
  } catch (err) {
    unlinkSync(temp);
    throw err;
  }
}

/** Removes a regular file under root (unlink removes a name, never what a link points to). */
export function removeContained(root: string, rel: string): void {
  checkFolders(root, rel, false);
  const st = lstatOrUndefined(join(root, rel));
  if (!st) return;
  if (!st.isFile()) throw new ContainmentError({ path: rel, message: st.isSymbolicLink() ? LINK_REFUSED : NOT_REGULAR });
  unlinkSync(join(root, rel));
}

/** Removes empty folders under root/folder, deepest first; links are never entered. */
export function removeEmptyFolders(root: string, folder: string): void {
  const st = lstatOrUndefined(join(root, folder));
  if (!st?.isDirectory()) return;
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    if (entry.isDirectory()) removeEmptyFolders(root, `${folder}/${entry.name}`);
  }
  if (readdirSync(join(root, folder)).length === 0) rmdirSync(join(root, folder));
}

/**
 * A relative path the layout may use: `/`-separated names, none empty, `.` or `..`, none holding
 * a backslash or NUL. Entity ids come from the server; this keeps a hostile answer inside the folder.
 */
export function isContainedPath(rel: string): boolean {
  return rel.split('/').every((n) => n !== '' && n !== '.' && n !== '..' && !/[\\\0]/.test(n));
}

/** Each folder between root and the file must be a real folder; with `make`, missing ones are made. */
function checkFolders(root: string, rel: string, make: boolean): void {
  if (!isContainedPath(rel)) throw new ContainmentError({ path: rel, message: 'is not a path inside the configuration directory' });
  const names = rel.split('/').slice(0, -1);
  let at = '';
  for (const name of names) {
    at = at ? `${at}/${name}` : name;
    const st = lstatOrUndefined(join(root, at));
    if (st?.isSymbolicLink()) throw new ContainmentError({ path: at, message: LINK_REFUSED });
    if (st && !st.isDirectory()) throw new ContainmentError({ path: at, message: 'is not a folder' });
    if (!st) {
      if (!make) return;
      mkdirSync(join(root, at));
    }
  }
}

/**
 * The folders were checked one by one before the open, but a folder swapped for a link in between
 * would be followed by it. Where the system names an open file's real path (Linux `/proc`), the
 * opened file must still lie under root; a file reached through a swapped folder is closed unread.
 */
function assertOpenedInside(fd: number, root: string, rel: string): void {
  let real: string;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return; // No /proc here: the lstat checks before the open are what there is.
  }
  if (!real.startsWith(`${root}/`)) {
    throw new ContainmentError({
      path: rel,
      message: 'was reached through a folder replaced by a link while it was being opened; nothing was read or written',
    });
  }
}

/** Removes a temp file this process made (best effort: it may be gone already). */
function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: nothing to undo.
  }
}

function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
