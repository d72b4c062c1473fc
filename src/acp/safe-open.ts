/**
 * Opening files and directories confined to workspace roots, checking what was opened
 * rather than the path before it. A path check followed by an open by path is a race (a
 * component swapped for a symbolic link in between escapes) and is blind to links to
 * `/proc/self/fd/N`; so here:
 *
 * - a directory is opened (following links), then the opened descriptor's real path
 *   (`/proc/self/fd/<fd>`) must be inside a root, and name the same file (device and inode)
 *   as the descriptor, before anything is done in it;
 * - the last component is then reached through that descriptor, `/proc/self/fd/<dir>/<name>`
 *   (Node has no `openat`: this is it), with `O_NOFOLLOW`, so no swap of any component can
 *   redirect it; the file opened is verified the same way and must be a regular file,
 *   with no other name (a hard link's other names may be anywhere: hard-links.ts).
 *
 * Without `/proc/self/fd` (not Linux) the same checks run on `realpath` after the open,
 * which still refuses before a byte is read or written, but only Linux closes every race.
 */
import { constants, existsSync } from 'node:fs';
import { mkdir, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { refuseForeignLinks } from './hard-links.js';

/** The real path of a workspace root, as given and resolved. */
export interface RealRoot {
  readonly given: string;
  readonly real: string;
}

/** A directory opened and verified to be inside a root. */
export interface ConfinedDir {
  readonly handle: FileHandle;
  /** Its real path when it was verified. */
  readonly real: string;
}

const procFds = existsSync('/proc/self/fd');

// O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused right after).
// O_NOCTTY: a terminal device must never become warden's controlling terminal.
const readFlags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY;
const createFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY;

/** Whether `path` is `root` or below it (both absolute and normalised). */
export function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Resolves the roots through symbolic links (a missing root stays as given). */
export async function realRoots(roots: readonly string[]): Promise<RealRoot[]> {
  return Promise.all(roots.map(async (root) => ({ given: root, real: await realpath(resolve(root)).catch(() => resolve(root)) })));
}

/** A refusal naming the path and the rule it broke (-32602). */
export function refusal(path: string, rule: string, data: Record<string, unknown> = {}): RpcError {
  return RpcError.invalidParams(`${rule}: ${path}`, { path, rule, ...data });
}

/**
 * The one refusal of a path outside the workspace, whichever check found it (the path, a
 * link's target, what was opened): `outside the workspace: <path>`, with `roots` (as given)
 * in its data, and `target` when a symbolic link led there.
 */
export function outsideWorkspace(path: string, roots: readonly string[], target?: string): RpcError {
  return refusal(path, 'outside the workspace', { roots: [...roots], ...(target === undefined ? {} : { target }) });
}

/** The `code` of a Node.js system error (`ENOENT`, `ELOOP`, …), if it is one. */
export function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException)?.code;
}

/** The path of `name` inside an opened directory, reached through its descriptor. */
export function entryOf(dir: ConfinedDir, name: string): string {
  return procFds ? `/proc/self/fd/${dir.handle.fd}/${name}` : join(dir.real, name);
}

/** What `handle` really is now: its real path, checked to name the same device and inode. */
async function realPathOf(handle: FileHandle, openedAs: string): Promise<string | undefined> {
  const real = procFds ? await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined) : await realpath(openedAs).catch(() => undefined);
  // Not a path (`pipe:[…]`, `socket:[…]`, `anon_inode:…`), or gone: nothing of the workspace.
  if (real === undefined || !isAbsolute(real)) return undefined;
  const [opened, named] = await Promise.all([handle.stat(), stat(real).catch(() => undefined)]);
  if (!named || named.dev !== opened.dev || named.ino !== opened.ino) return undefined;
  return real;
}

/** Throws unless the opened `handle` is inside a root; returns its real path. */
async function verifyInside(handle: FileHandle, openedAs: string, path: string, roots: readonly RealRoot[]): Promise<string> {
  const real = await realPathOf(handle, openedAs);
  if (real === undefined || !roots.some((root) => inside(root.real, real))) {
    throw outsideWorkspace(path, roots.map((root) => root.given));
  }
  return real;
}

/**
 * Opens the directory `path` and verifies it; with `create`, missing directories are made
 * one by one, each inside its verified parent (so none can be made outside). Refusals name
 * `shown`, the path the agent asked for.
 */
export async function openConfinedDir(path: string, roots: readonly RealRoot[], create: boolean, shown = path): Promise<ConfinedDir> {
  let handle: FileHandle;
  try {
    handle = await open(path, dirFlags);
  } catch (error) {
    if (errno(error) === 'ENOTDIR') throw refusal(shown, 'a component of the path is not a directory');
    const parentPath = resolve(path, '..');
    if (errno(error) !== 'ENOENT' || !create || parentPath === path) throw error;
    const parent = await openConfinedDir(parentPath, roots, true, shown);
    try {
      const name = path.slice(parentPath.length + (parentPath.endsWith(sep) ? 0 : 1));
      await mkdir(entryOf(parent, name)).catch((made: unknown) => {
        if (errno(made) !== 'EEXIST') throw made;
      });
      handle = await open(entryOf(parent, name), dirFlags);
    } finally {
      await parent.handle.close();
    }
  }
  try {
    const real = await verifyInside(handle, path, shown, roots);
    return { handle, real };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Opens the entry `name` of a verified directory for reading, without following a link
 * there: a link is answered as `{ link }` (its target, for the caller to check as a path of
 * its own). Anything but a regular file inside a root is refused, and so is a file with
 * other names (hard links) unless it is a file of one of `linkStores` (hard-links.ts).
 */
export async function openConfinedFile(dir: ConfinedDir, name: string, path: string, roots: readonly RealRoot[], linkStores: readonly string[]): Promise<FileHandle | { readonly link: string }> {
  const entry = entryOf(dir, name);
  let handle: FileHandle;
  try {
    handle = await open(entry, readFlags);
  } catch (error) {
    // O_NOFOLLOW on a link: ELOOP on Linux and macOS, EMLINK on FreeBSD.
    if (errno(error) === 'ELOOP' || errno(error) === 'EMLINK') return { link: resolve(dir.real, await readlink(entry)) };
    // A FIFO opened for writing, or a socket: not a file either way.
    if (errno(error) === 'ENXIO' || errno(error) === 'EOPNOTSUPP') throw refusal(path, 'not a regular file');
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) throw refusal(path, 'not a regular file');
    await verifyInside(handle, join(dir.real, name), path, roots);
    await refuseForeignLinks(handle, path, linkStores);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Creates a new file `name` (which must not exist) in a verified directory, for writing. */
export async function createConfinedFile(dir: ConfinedDir, name: string, path: string, roots: readonly RealRoot[], mode: number): Promise<FileHandle> {
  const handle = await open(entryOf(dir, name), createFlags, mode);
  try {
    await verifyInside(handle, join(dir.real, name), path, roots);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}
