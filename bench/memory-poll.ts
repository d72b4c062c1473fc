/**
 * What one memory sample of an agent's process tree costs warden (src/port/port-memory.ts):
 * the walk of `/proc/<pid>/task/<tid>/children` from the root plus `RssAnon + RssShmem` of
 * every process (tree-memory.ts), against a tree of 51 processes (a shell and 50 `sleep`,
 * every fifth in its own session, as Claude Code's Bash commands are). Prints the mean and
 * the p99 of 200 samples; the poll runs once a second by default (`--memory-poll`).
 */
import { spawn } from 'node:child_process';
import { walkTree } from '../src/port/process-tree.js';
import { treeResidentBytes } from '../src/port/tree-memory.js';
import { formatNs, now, since } from './support/measure.js';

export async function memoryPoll(): Promise<void> {
  console.log('\n## memory poll of a process tree (walk + RssAnon/RssShmem)');
  const script = 'for i in $(seq 1 50); do if [ $((i % 5)) -eq 0 ]; then setsid sleep 600 & else sleep 600 & fi; done; wait';
  const shell = spawn('sh', ['-c', script], { stdio: 'ignore', detached: true });
  const root = shell.pid as number;
  try {
    const deadline = Date.now() + 10_000;
    while (walkTree(root).length < 51 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const times: number[] = [];
    let processes = 0;
    let bytes = 0;
    for (let sample = 0; sample < 200; sample++) {
      const started = now();
      const members = walkTree(root);
      bytes = treeResidentBytes(members);
      times.push(since(started));
      processes = members.length;
    }
    times.sort((a, b) => a - b);
    const mean = times.reduce((sum, time) => sum + time, 0) / times.length;
    console.log(`tree: ${processes} processes, ${(bytes / (1024 * 1024)).toFixed(1)} MiB (RssAnon + RssShmem)`);
    console.log(`one sample: mean ${formatNs(mean)}, p99 ${formatNs(times[Math.floor(times.length * 0.99)] as number)} (200 samples)`);
  } finally {
    // The shell's group, and the sleeps in their own sessions (found by the walk).
    for (const member of walkTree(root)) {
      try {
        process.kill(member.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    try {
      process.kill(-root, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
