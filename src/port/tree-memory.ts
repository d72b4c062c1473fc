/**
 * The memory a process tree uses, as its agent's limit counts it: the sum over every process
 * of the tree of `RssAnon + RssShmem` from `/proc/<pid>/status`. Not `VmRSS`: its file pages
 * (a CLI's 400 MB native binary, shared libraries) are counted once per process and are not
 * what leaks; anonymous and shared-memory pages are what a memory cgroup charges too.
 */
import { readFileSync } from 'node:fs';
import type { TreeMember } from './process-tree.js';

const kibibyte = 1024;

/** Anonymous + shared-memory resident bytes of `pid`; 0 when it is gone. */
export function residentBytesOf(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return 0;
  }
  let kib = 0;
  for (const line of status.split('\n')) {
    if (line.startsWith('RssAnon:') || line.startsWith('RssShmem:')) kib += Number.parseInt(line.slice(line.indexOf(':') + 1), 10) || 0;
  }
  return kib * kibibyte;
}

/** The resident bytes of a tree's processes together. */
export function treeResidentBytes(members: readonly TreeMember[]): number {
  let total = 0;
  for (const member of members) total += residentBytesOf(member.pid);
  return total;
}
