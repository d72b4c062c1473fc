/**
 * The bearer token of `warden serve`, kept in a file only its owner can read. The file is
 * created on first use, published whole (a reader never sees it half written), and two
 * daemons started at the same instant end with the same token: each writes a temp file and
 * hard-links it into place, which fails for all but one; the others read the winner's.
 */
import { randomBytes } from 'node:crypto';
import { constants, promises as fs, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, posix, win32 } from 'node:path';

/** Bytes of randomness in a created token (43 base64url characters). */
export const tokenBytes = 32;

/**
 * The default token file, under the user's state directory: `$XDG_STATE_HOME/acp-warden/token`
 * (an absolute `XDG_STATE_HOME` only, as for the journal) or `~/.local/state/acp-warden/token`;
 * `~/Library/Application Support/acp-warden/token` on macOS; `%LOCALAPPDATA%\acp-warden\token`
 * on Windows.
 */
export function defaultTokenPath(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home: string = homedir()): string {
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA && win32.isAbsolute(env.LOCALAPPDATA) ? env.LOCALAPPDATA : win32.join(home, 'AppData', 'Local');
    return win32.join(local, 'acp-warden', 'token');
  }
  if (platform === 'darwin') return posix.join(home, 'Library', 'Application Support', 'acp-warden', 'token');
  const state = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : posix.join(home, '.local', 'state');
  return posix.join(state, 'acp-warden', 'token');
}

/**
 * The token in `path`, trimmed; when there is no file there, creates it (mode 0600, its
 * directory 0700) holding a new random token. Rejects, naming the path and the fix, a file
 * others may read (`chmod 600`), an empty file, a token that cannot travel in an HTTP header,
 * and a directory.
 */
export async function readOrCreateToken(path: string): Promise<string> {
  const existing = await readToken(path);
  if (existing !== undefined) return existing;
  await publishNewToken(path);
  const token = await readToken(path);
  if (token === undefined) throw new Error(`token file ${path} vanished while it was being created; start again`);
  return token;
}

/**
 * The token in `path` (what a client sends), or undefined when there is no file there; the
 * same refusals as {@link readOrCreateToken}, but nothing is created. Synchronous: one short
 * line, read before its reader has anything else to do; `fs.promises` and its round trips
 * through the thread pool cost a bridge's start about 2 ms, the sync calls 0.4 ms.
 */
export function readToken(path: string): string | undefined {
  let stats;
  try {
    stats = statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read the token file ${path}: ${(error as Error).message} (give --token-file a path you can read and write)`, { cause: error });
  }
  if (stats.isDirectory()) throw new Error(`token file ${path} is a directory: give --token-file the path of a file (it is created when missing)`);
  if (!stats.isFile()) throw new Error(`token file ${path} is not a regular file: give --token-file the path of a file (it is created when missing)`);
  // Windows has no such mode bits (its ACLs decide); the default path there is per user.
  if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
    const mode = (stats.mode & 0o777).toString(8).padStart(3, '0');
    throw new Error(`token file ${path} can be read by other users (mode ${mode}): run chmod 600 ${path}`);
  }
  const token = readFileSync(path, 'utf8').trim();
  if (token === '') throw new Error(`token file ${path} is empty: write a token in it, or delete it and a new one is created`);
  if (!/^[\x21-\x7e]+$/.test(token)) throw new Error(`token file ${path} holds characters a header cannot carry: the token must be one line of printable ASCII without spaces (or delete the file and a new one is created)`);
  return token;
}

/** Writes a new token to a temp file beside `path` and links it there unless a file appeared first. */
async function publishNewToken(path: string): Promise<void> {
  const cannot = (error: unknown): never => {
    throw new Error(`cannot create the token file ${path}: ${(error as Error).message} (give --token-file a path in a directory you can write)`, { cause: error });
  };
  const dir = dirname(path);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 }).catch(cannot);
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const file = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600).catch(cannot);
  try {
    await file.writeFile(`${randomBytes(tokenBytes).toString('base64url')}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await fs.link(temp, path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // EEXIST: another process won the race; its token is the one. Without hard links
    // (some network or FAT file systems) a rename publishes it: the last racer wins there.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS' || code === 'EXDEV') await fs.rename(temp, path);
    else if (code !== 'EEXIST') cannot(error);
  } finally {
    await fs.rm(temp, { force: true });
  }
  await syncDirectory(dir);
}

/** Makes the new name durable where the platform allows opening a directory. */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await fs.open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}
