/**
 * File access requested by agents (`fs/read_text_file`, `fs/write_text_file`), confined to
 * the session's workspace roots. A path must be absolute and inside a root; what is opened
 * is checked, not the path before it (see `safe-open.ts`): a link out of the workspace, a
 * link to `/proc/self/fd/N`, a component swapped mid-way, a FIFO, a socket or a device are
 * all refused with -32602 naming the path and the rule, before a byte is read or written,
 * so a prompt-injected "read ../../.ssh/id_rsa" goes nowhere.
 *
 * A symbolic link as the last component is followed by warden itself, one hop at a time,
 * each hop checked as a path of its own (so `AGENTS.md -> CLAUDE.md` works, and a dangling
 * link creates its target only if that target is inside).
 *
 * Writes are atomic: the content goes to a new temporary file in the verified directory,
 * which is then renamed over the target (readers see the old or the new file, never half
 * of one; the file's mode is kept). Renaming breaks a hard link, which is the safe
 * direction: a file outside that shares the inode is left untouched. A read of a file with
 * other names is refused instead (its content is theirs too; see `hard-links.ts`).
 */
import { randomBytes } from 'node:crypto';
import { lstat, readlink, realpath, rename, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { readLineRange, tooLarge, validFileReadLimits, type FileReadLimits } from './bounded-read.js';
import { validLinkStores } from './hard-links.js';
import { createConfinedFile, entryOf, errno, inside, openConfinedDir, openConfinedFile, outsideWorkspace, realRoots, refusal, type ConfinedDir, type RealRoot } from './safe-open.js';

/** The roots a session may touch (its cwd and additional directories). */
export type WorkspaceRoots = readonly string[];

/** How the host serves `fs/read_text_file`: its bounds, and whose hard links it reads. */
export interface FileReadOptions extends FileReadLimits {
  /**
   * Package stores (absolute, as `pnpm store path` prints them) whose files may be read
   * through a hard link in the workspace (pnpm's `node_modules`). Any other file with more
   * than one name is refused with -32602: its other names may be outside the workspace.
   * Name only a store nobody else writes to. Default: none.
   */
  readonly linkStores?: readonly string[];
}

/** Symbolic links followed in a row before giving up, as the kernel does (ELOOP). */
const maxLinkHops = 40;

/** The deepest existing ancestor of `path`, resolved through symbolic links, plus the rest. */
async function resolveExisting(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : resolve(real, ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return path;
      missing.push(current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      current = parent;
    }
  }
}

/**
 * Checks that `path` looks inside the roots; returns its resolved form or throws -32602.
 * A check of the path only (terminals' `cwd` uses it): file access also checks what it opens.
 */
export async function confine(path: unknown, roots: WorkspaceRoots): Promise<string> {
  if (typeof path !== 'string' || !isAbsolute(path)) {
    throw RpcError.invalidParams(`path must be absolute, got ${JSON.stringify(path)}`, { path });
  }
  if (roots.length === 0) throw RpcError.invalidParams('no workspace roots are configured for file access', { path });
  const resolved = await resolveExisting(resolve(path));
  const allowed = await realRoots(roots);
  if (!allowed.some((root) => inside(root.real, resolved))) {
    throw outsideWorkspace(path, roots);
  }
  return resolved;
}

/** The wire error for a failure that is not a refusal. */
function failure(error: unknown, doing: 'read' | 'write', path: string): RpcError {
  if (error instanceof RpcError) return error;
  if (errno(error) === 'ENOENT') return RpcError.resourceNotFound(path, { path });
  return RpcError.internalError(`cannot ${doing} ${path}: ${errno(error) ?? (error as Error).message}`, { path });
}

/**
 * Walks `path` to its final target, following links in the last component one checked hop
 * at a time, and calls `use` with the verified directory and the entry's name.
 */
async function withTarget<T>(
  given: string,
  roots: WorkspaceRoots,
  create: boolean,
  use: (dir: ConfinedDir, name: string, real: readonly RealRoot[]) => Promise<T | { readonly link: string }>,
): Promise<T> {
  const real = await realRoots(roots);
  let path = resolve(given);
  for (let hop = 0; hop <= maxLinkHops; hop++) {
    if (hop === 0) await confine(path, roots);
    else await confine(path, roots).catch(() => Promise.reject(outsideWorkspace(given, roots, path)));
    if (real.some((root) => root.real === path || resolve(root.given) === path)) throw refusal(given, 'not a regular file');
    const dir = await openConfinedDir(dirname(path), real, create, given);
    let outcome: T | { readonly link: string };
    try {
      outcome = await use(dir, basename(path), real);
    } finally {
      await dir.handle.close();
    }
    if (typeof outcome === 'object' && outcome !== null && 'link' in outcome) {
      path = outcome.link;
      continue;
    }
    return outcome as T;
  }
  throw refusal(given, 'too many levels of symbolic links');
}

/**
 * `fs/read_text_file`: the content, or the lines `line` (1-based) to `line + limit - 1`,
 * within `options.maxReadBytes` (default 64 MiB): a whole file over it is refused before a byte
 * is read, a range is streamed (only its lines are held) and refused once it comes to more.
 * A file with other names (hard links) is refused unless it is one of `options.linkStores`'.
 */
export async function readTextFile(params: { path: string; line?: number | null; limit?: number | null }, roots: WorkspaceRoots, options: FileReadOptions = {}): Promise<{ content: string }> {
  const { maxReadBytes } = validFileReadLimits(options);
  const linkStores = validLinkStores(options.linkStores);
  const whole = params.line == null && params.limit == null;
  const range = { start: Math.max(0, (params.line ?? 1) - 1), count: params.limit == null ? undefined : Math.max(0, params.limit) };
  let content: string;
  try {
    content = await withTarget(params.path, roots, false, async (dir, name, real) => {
      const opened = await openConfinedFile(dir, name, params.path, real, linkStores);
      if ('link' in opened) return opened;
      try {
        if (whole && (await opened.stat()).size > maxReadBytes) throw tooLarge(params.path, maxReadBytes, 'the content');
        return await readLineRange(opened, range, maxReadBytes, params.path);
      } finally {
        await opened.close();
      }
    });
  } catch (error) {
    throw failure(error, 'read', params.path);
  }
  return { content };
}

/** Writes `content` to a temporary file beside `name`, then renames it over `name`. */
async function replace(dir: ConfinedDir, name: string, content: string, path: string, real: readonly RealRoot[], mode: number | undefined): Promise<void> {
  const temp = `.warden-${randomBytes(6).toString('hex')}.tmp`;
  const handle = await createConfinedFile(dir, temp, path, real, 0o666);
  let renamed = false;
  try {
    try {
      await handle.writeFile(content, 'utf8');
      if (mode !== undefined) await handle.chmod(mode & 0o777);
    } finally {
      await handle.close();
    }
    await rename(entryOf(dir, temp), entryOf(dir, name));
    renamed = true;
  } finally {
    if (!renamed) await unlink(entryOf(dir, temp)).catch(() => {});
  }
}

/** `fs/write_text_file`: creates the file (and its directories inside the workspace) if missing. */
export async function writeTextFile(params: { path: string; content: string }, roots: WorkspaceRoots): Promise<Record<string, never>> {
  try {
    await withTarget(params.path, roots, true, async (dir, name, real) => {
      const entry = entryOf(dir, name);
      const existing = await lstat(entry).catch((error: unknown) => {
        if (errno(error) === 'ENOENT') return undefined;
        throw error;
      });
      if (existing?.isSymbolicLink()) return { link: resolve(dir.real, await readlink(entry)) };
      if (existing && !existing.isFile()) throw refusal(params.path, 'not a regular file');
      await replace(dir, name, params.content, params.path, real, existing?.mode);
      return true;
    });
  } catch (error) {
    throw failure(error, 'write', params.path);
  }
  return {};
}
