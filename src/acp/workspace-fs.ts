/**
 * File access requested by agents (`fs/read_text_file`, `fs/write_text_file`), confined to
 * the session's workspace roots. A path must be absolute and, once `..` and symbolic links
 * are resolved, inside a root; anything else is refused with -32602 naming the path, so a
 * prompt-injected "read ../../.ssh/id_rsa" goes nowhere.
 */
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { RpcError } from '../jsonrpc/rpc-error.js';

/** The roots a session may touch (its cwd and additional directories). */
export type WorkspaceRoots = readonly string[];

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

async function realRoots(roots: WorkspaceRoots): Promise<string[]> {
  return Promise.all(roots.map(async (root) => realpath(resolve(root)).catch(() => resolve(root))));
}

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

/** Checks that `path` may be touched; returns its resolved form or throws -32602. */
export async function confine(path: unknown, roots: WorkspaceRoots): Promise<string> {
  if (typeof path !== 'string' || !isAbsolute(path)) {
    throw RpcError.invalidParams(`path must be absolute, got ${JSON.stringify(path)}`, { path });
  }
  if (roots.length === 0) throw RpcError.invalidParams('no workspace roots are configured for file access', { path });
  const resolved = await resolveExisting(resolve(path));
  const allowed = await realRoots(roots);
  if (!allowed.some((root) => inside(root, resolved))) {
    throw RpcError.invalidParams(`path is outside the workspace: ${path}`, { path, roots: [...roots] });
  }
  return resolved;
}

/** `fs/read_text_file`: the content, or the lines `line` (1-based) to `line + limit - 1`. */
export async function readTextFile(params: { path: string; line?: number | null; limit?: number | null }, roots: WorkspaceRoots): Promise<{ content: string }> {
  const file = await confine(params.path, roots);
  let content: string;
  try {
    content = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw RpcError.resourceNotFound(params.path, { path: params.path });
    throw RpcError.internalError(`cannot read ${params.path}: ${code ?? (error as Error).message}`);
  }
  if (params.line == null && params.limit == null) return { content };
  const lines = content.split('\n');
  const start = Math.max(0, (params.line ?? 1) - 1);
  const end = params.limit == null ? lines.length : start + Math.max(0, params.limit);
  return { content: lines.slice(start, end).join('\n') };
}

/** `fs/write_text_file`: creates the file (and its directories inside the workspace) if missing. */
export async function writeTextFile(params: { path: string; content: string }, roots: WorkspaceRoots): Promise<Record<string, never>> {
  const file = await confine(params.path, roots);
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, params.content, 'utf8');
  } catch (error) {
    throw RpcError.internalError(`cannot write ${params.path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return {};
}
