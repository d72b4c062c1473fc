/**
 * What confinement means for a file with more than one name (a hard link). Every name of an
 * inode is the same file, and the checks of what was opened (safe-open.ts) only see the name
 * they came through: a workspace holding a second name of `~/.ssh/id_rsa` (made by `cp -al`,
 * `rsync -H`, a restored backup, or planted) would pass them. Finding an inode's other names
 * means walking whole file systems, so warden does not try: a read of a regular file with
 * more than one name is refused, whichever names it has, unless one of them is proved to be
 * in a package store the host named (`linkStores`).
 *
 * The proof is cheap because such a store is content-addressed: pnpm keeps each file as
 * `<store>/files/<first 2 hex digits>/<other 126>` of its content's SHA-512 (`-exec` added
 * for an executable). Hashing what was opened gives the one name it may have there, and that
 * name must be the very inode opened (device and inode, not followed if it is a link). A file
 * whose name in the store is not its hash is not served, so a secret linked into the store
 * under any other name stays refused.
 *
 * Writes need none of this: they replace the name by a rename (workspace-fs.ts), which leaves
 * every other name of the old inode, inside or outside, untouched.
 */
import { createHash } from 'node:crypto';
import { lstat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { RpcError } from '../jsonrpc/rpc-error.js';

/** The rule named in the refusal's `data.rule`. */
export const hardLinkedRule = 'hard-linked file';

/** Content-addressed suffixes a store file may carry (pnpm marks executables `-exec`). */
const storeSuffixes = ['', '-exec'] as const;
const chunkBytes = 64 * 1024;

/**
 * The host's `linkStores`, checked: absolute directories (what `pnpm store path` prints). A
 * bad value is a TypeError naming the option.
 */
export function validLinkStores(stores: unknown): readonly string[] {
  if (stores === undefined) return [];
  if (!Array.isArray(stores) || !stores.every((store) => typeof store === 'string' && isAbsolute(store))) {
    throw new TypeError(`Expected the \`linkStores\` option to be an array of absolute directories (as \`pnpm store path\` prints them), got \`${JSON.stringify(stores)}\` (${Array.isArray(stores) ? 'array' : typeof stores}).`);
  }
  return stores as readonly string[];
}

/** The -32602 refusal of a read of a file with `links` names, with the two ways out. */
function hardLinked(path: string, links: number): RpcError {
  return RpcError.invalidParams(
    `${hardLinkedRule} (${links} names; the others may be outside the workspace): ${path}; give the workspace its own copy (cp -p FILE FILE.copy && mv FILE.copy FILE), or, for a package store's link (pnpm), name the store in the host's files.linkStores`,
    { path, rule: hardLinkedRule, links },
  );
}

/** The SHA-512 of the whole file behind `handle`, read by position (its offset is not moved). */
async function sha512Of(handle: FileHandle): Promise<string> {
  const hash = createHash('sha512');
  const buffer = Buffer.allocUnsafe(chunkBytes);
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, chunkBytes, position);
    if (bytesRead === 0) return hash.digest('hex');
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
}

/** Whether the opened file is, by device and inode, its own content-addressed name in a store. */
async function storedIn(handle: FileHandle, dev: bigint, ino: bigint, stores: readonly string[]): Promise<boolean> {
  const hex = await sha512Of(handle);
  for (const store of stores) {
    for (const suffix of storeSuffixes) {
      const named = await lstat(join(store, 'files', hex.slice(0, 2), `${hex.slice(2)}${suffix}`), { bigint: true }).catch(() => undefined);
      if (named?.isFile() && named.dev === dev && named.ino === ino) return true;
    }
  }
  return false;
}

/**
 * Throws the -32602 refusal unless the opened regular file has one name, or is a file of
 * one of `stores` under its content's name there.
 */
export async function refuseForeignLinks(handle: FileHandle, path: string, stores: readonly string[]): Promise<void> {
  const { nlink, dev, ino } = await handle.stat({ bigint: true });
  if (nlink <= 1n) return;
  if (stores.length > 0 && (await storedIn(handle, dev, ino, stores))) return;
  throw hardLinked(path, Number(nlink));
}
