/**
 * What the soak reads from /proc: warden's RSS and open fds, its live child processes (the
 * agent CLIs) with their working directories, and whether a pid is still alive. Never trust a
 * handle: a process is alive when /proc says so.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { statFields } from '../support/process-cpu.js';

/** Whether `pid` is a live process (a zombie only waits to be reaped: dead). */
export function isAlive(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== undefined && fields[0] !== 'Z';
}

/** Resident set size of `pid` in kB (VmRSS), or undefined when it is gone. */
export function rssKb(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/mu.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Open file descriptors of `pid`, or undefined when it is gone. */
export function openFds(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/** A live child process of warden. */
export interface ChildProcessInfo {
  readonly pid: number;
  /** Its working directory: which session it serves. */
  readonly cwd: string | undefined;
  /** `T` when stopped (SIGSTOP), `S`/`R` otherwise. */
  readonly state: string;
  /** Seconds since it started. */
  readonly ageSeconds: number;
  readonly cmdline: string;
}

const ticksPerSecond = 100; // USER_HZ, 100 on every Linux the soak runs on

function uptimeSeconds(): number {
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
}

/** Live direct children of `parent` whose command line contains `marker`. */
export function childrenOf(parent: number, marker: string): ChildProcessInfo[] {
  const now = uptimeSeconds();
  const found: ChildProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    const pid = Number(entry);
    const fields = statFields(pid);
    // fields: state ppid pgrp … starttime is field 22 of stat, index 19 here.
    if (!fields || fields[0] === 'Z' || Number(fields[1]) !== parent) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      if (!cmdline.includes(marker)) continue;
      let cwd: string | undefined;
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        cwd = undefined;
      }
      found.push({ pid, cwd, state: fields[0] as string, ageSeconds: now - Number(fields[19]) / ticksPerSecond, cmdline });
    } catch {
      // gone while reading
    }
  }
  return found;
}

/** Live processes of process group `pgid`. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && fields[0] !== 'Z' && Number(fields[2]) === pgid) members.push(Number(entry));
  }
  return members;
}
