/**
 * Process checks for tests that spawn real processes: read /proc, never trust a handle.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Live (not zombie) processes, as [pid, pgid, state]. */
function processTable(): Array<{ pid: number; pgid: number; state: string }> {
  const rows: Array<{ pid: number; pgid: number; state: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid pgrp ...: comm may contain spaces, so parse after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      rows.push({ pid: Number(entry), state: fields[0] as string, pgid: Number(fields[2]) });
    } catch {
      // gone while reading
    }
  }
  return rows;
}

/** A pid a check can rely on: a test that never learned one must fail, not pass vacuously. */
function requirePid(pid: number | undefined, what: string): number {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) {
    throw new Error(`${what} was given no process id (${String(pid)}): the test never learned the pid of the process it started`);
  }
  return pid;
}

/**
 * Whether `pid` is a live process (zombies count as dead: they only wait to be reaped). A pid
 * never learned (undefined, not a positive integer) throws: "not alive" of nothing proves nothing.
 */
export function isAlive(pid: number | undefined): boolean {
  requirePid(pid, 'isAlive');
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Live processes of process group `pgid`. */
export function groupMembers(pgid: number): number[] {
  return processTable().filter((row) => row.pgid === pgid && row.state !== 'Z').map((row) => row.pid);
}

/** Polls `predicate` (awaited when it is async: an HTTP probe, say) until it holds, or fails after a generous deadline, naming `what` (a function: as it is at the deadline). */
export async function waitUntil(predicate: () => boolean | Promise<boolean>, what: string | (() => string), timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Asserts, with a deadline, that nothing of group `pgid` is left. A pgid the test never
 * learned (undefined, or not a positive integer) fails: an empty group of nothing proves nothing.
 */
export async function expectGroupGone(pgid: number | undefined, timeoutMs = 10_000): Promise<void> {
  const group = requirePid(pgid, 'expectGroupGone');
  await waitUntil(() => groupMembers(group).length === 0, `process group ${group} to be gone (left: ${groupMembers(group).join(', ')})`, timeoutMs);
}

/** Live processes whose command line (arguments joined by spaces) passes `matches`. */
export function processesWhere(matches: (cmdline: string) => boolean): number[] {
  const found: number[] = [];
  for (const { pid, state } of processTable()) {
    if (state === 'Z') continue;
    try {
      if (matches(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' '))) found.push(pid);
    } catch {
      // gone while reading
    }
  }
  return found;
}

/** Live direct children of `pid`, with their command lines. */
export function childrenOf(pid: number): Array<{ pid: number; cmdline: string }> {
  const children: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || Number(fields[1]) !== pid) continue;
      children.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') });
    } catch {
      // gone while reading
    }
  }
  return children;
}

/** The complete lines of a file another process is still appending to (a last line without its newline is left out). */
export function wholeLines(text: string): string[] {
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean);
}
