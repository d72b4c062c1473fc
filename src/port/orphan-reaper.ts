/**
 * The orphan reaper: a tiny companion process that kills the ports' process groups if the
 * host dies without doing it (SIGKILL, an OOM kill, a crash of Node itself).
 *
 * Node has no PR_SET_PDEATHSIG. A CLI notices its host's death only when it reads EOF on
 * stdin, and the tools it started (shells, MCP servers) may never notice at all. So the host
 * starts one reaper, tells it over a pipe which groups are alive (`+pgid`, `-pgid`), and the
 * reaper, on EOF of that pipe, sends SIGTERM to every group still registered, then SIGKILL
 * after a grace period. The reaper leads its own process group and ignores SIGINT, SIGTERM
 * and SIGHUP, so a Ctrl-C or a `kill` aimed at the host does not take it down first.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** Milliseconds between the reaper's SIGTERM and SIGKILL. */
export const reaperGraceMs = 1000;

const reaperSource = `
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});
const groups = new Set();
let pending = '';
let reaping = false;
const kill = (signal) => { for (const group of groups) { try { process.kill(-group, signal); } catch {} } };
const reap = () => {
  if (reaping) return;
  reaping = true;
  if (groups.size === 0) process.exit(0);
  kill('SIGTERM');
  kill('SIGCONT'); // a stopped process gets its SIGTERM only once continued
  setTimeout(() => { kill('SIGKILL'); process.exit(0); }, ${reaperGraceMs});
};
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let newline;
  while ((newline = pending.indexOf('\\n')) >= 0) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    const group = Number(line.slice(1));
    if (!Number.isInteger(group) || group <= 1) continue;
    if (line[0] === '+') groups.add(group);
    else if (line[0] === '-') groups.delete(group);
  }
});
process.stdin.on('end', reap);
process.stdin.on('error', reap);
`;

let reaper: ChildProcess | undefined;
let disabled = process.env.WARDEN_ORPHAN_REAPER === '0';

function ensureReaper(): ChildProcess | undefined {
  if (disabled) return undefined;
  if (reaper && reaper.exitCode === null && reaper.signalCode === null && reaper.stdin?.writable) return reaper;
  try {
    const child = spawn(process.execPath, ['-e', reaperSource, '--', 'acp-warden-orphan-reaper', String(process.pid)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    child.on('error', () => {
      reaper = undefined;
    });
    child.stdin?.on('error', () => {
      reaper = undefined;
    });
    // The reaper must never keep the host alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    reaper = child;
    return child;
  } catch {
    return undefined;
  }
}

/** Tells the reaper that group `pgid` is alive. */
export function reaperTrack(pgid: number): void {
  ensureReaper()?.stdin?.write(`+${pgid}\n`);
}

/** Tells the reaper that group `pgid` is gone. */
export function reaperForget(pgid: number): void {
  if (reaper?.stdin?.writable) reaper.stdin.write(`-${pgid}\n`);
}

/** The reaper's pid, when one runs (for tests and `warden inspect`). */
export function reaperPid(): number | undefined {
  return reaper?.pid;
}

/** Turns the reaper off (or on again) for this process; also `WARDEN_ORPHAN_REAPER=0`. */
export function setOrphanReaper(enabled: boolean): void {
  disabled = !enabled;
}
