/**
 * Reads warden's JSON log (`--log-file … --log-format json`) as it grows and counts the
 * events the report needs: restarts of agent processes, sessions that failed, recoveries.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** Counts of warden's log events by `type`. */
export interface LogCounts {
  restarts: number;
  /**
   * Restarts for memory (exit `memory_exceeded`): recycled at the soft limit, killed at the hard
   * one, and the largest tree size a crossing sample saw, in MiB (from the restart's message).
   */
  readonly memory: { soft: number; hard: number; maxMiB: number };
  recovered: number;
  failed: number;
  /** Lines that warden logged at level `error`. */
  errors: number;
  /** Messages of the first few error lines, to show in the report. */
  readonly errorSamples: string[];
}

/** Counts the events of `line` into `counts`; lines that are not JSON objects are ignored. */
export function countLine(counts: LogCounts, line: string): void {
  let entry: { type?: unknown; level?: unknown; message?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return;
  }
  if (entry.type === 'session.restarting') {
    counts.restarts++;
    const memory = typeof entry.message === 'string' ? /used ([\d.]+) MiB of memory .*over its (soft|hard) limit/u.exec(entry.message) : null;
    if (memory) {
      counts.memory[memory[2] as 'soft' | 'hard']++;
      counts.memory.maxMiB = Math.max(counts.memory.maxMiB, Number(memory[1]));
    }
  }
  else if (entry.type === 'session.recovered') counts.recovered++;
  else if (entry.type === 'session.failed') counts.failed++;
  if (entry.level === 'error') {
    counts.errors++;
    if (counts.errorSamples.length < 5 && typeof entry.message === 'string') counts.errorSamples.push(entry.message);
  }
}

/** Follows a log file: each `read()` counts the lines appended since the last one. */
export class LogFollower {
  readonly counts: LogCounts = { restarts: 0, memory: { soft: 0, hard: 0, maxMiB: 0 }, recovered: 0, failed: 0, errors: 0, errorSamples: [] };
  #offset = 0;
  #partial = '';

  constructor(private readonly path: string) {}

  read(): LogCounts {
    let size: number;
    try {
      size = statSync(this.path).size;
    } catch {
      return this.counts; // nothing logged yet
    }
    if (size <= this.#offset) return this.counts;
    const buffer = Buffer.alloc(size - this.#offset);
    const fd = openSync(this.path, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, this.#offset);
    } finally {
      closeSync(fd);
    }
    this.#offset = size;
    const lines = (this.#partial + buffer.toString('utf8')).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) if (line) countLine(this.counts, line);
    return this.counts;
  }
}
