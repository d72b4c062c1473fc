/**
 * The CPU time a repetition costs, beside its wall time: all the threads of the process that
 * does the work (V8's compiler and garbage collector threads included), and its main thread
 * alone where Linux tells it (`/proc/PID/task/TID/schedstat`, in ns). This process by
 * default (`process.cpuUsage()`), or another one (a warden the bench started) from `/proc`. On
 * a loaded machine the wall time counts the waits for a core; the CPU time much less.
 */
import { allThreadsNs, mainThreadNs } from './process-cpu.js';

/** CPU per operation of each case's repetitions: the whole process and its main thread, in ns. */
export interface CpuRecorder<K extends string> {
  /**
   * `run` (one repetition of `operations` operations, returning its wall ns per operation)
   * with its CPU recorded under `name`: this process's, or that of the process `pid()` names.
   */
  around(name: K, run: () => number | Promise<number>, pid?: () => number): () => Promise<number>;
  /** The median CPU per operation of `name` after the first `skip` repetitions (the warm-up): all threads, and the main thread (`undefined` without `/proc`). */
  median(name: K, skip: number): { readonly process: number | undefined; readonly main: number | undefined };
}

/** A recorder for repetitions of `operations` operations each. */
export function cpuRecorder<K extends string>(operations: number): CpuRecorder<K> {
  const allNs = new Map<K, number[]>();
  const mainNs = new Map<K, number[]>();
  const push = (into: Map<K, number[]>, name: K, before: number | undefined, after: number | undefined) => {
    if (before === undefined || after === undefined) return;
    const list = into.get(name) ?? [];
    list.push((after - before) / operations);
    into.set(name, list);
  };
  const medianOf = (samples: readonly number[]) => {
    if (samples.length === 0) return undefined;
    const sorted = [...samples].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  };
  const ownNs = () => {
    const used = process.cpuUsage();
    return (used.user + used.system) * 1000;
  };
  return {
    around: (name, run, pid) => async () => {
      const of = pid?.() ?? process.pid;
      const all = () => (of === process.pid ? ownNs() : allThreadsNs(of));
      const [mainBefore, allBefore] = [mainThreadNs(of), all()];
      const wall = await run();
      push(allNs, name, allBefore, all());
      push(mainNs, name, mainBefore, mainThreadNs(of));
      return wall;
    },
    median: (name, skip) => ({ process: medianOf((allNs.get(name) ?? []).slice(skip)), main: medianOf((mainNs.get(name) ?? []).slice(skip)) }),
  };
}
