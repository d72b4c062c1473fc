/**
 * The pid (also the process group id) of a port's CLI, learned for real: a port's first spawn
 * waits for execa to load (src/port/execa-loader.ts), so right after `start()` its context may
 * have no pid yet. A leak check on a pid nobody learned would check nothing.
 */
import type { AnyActorRef } from 'xstate';
import { waitUntil } from './processes.js';

/** Waits until `port` has spawned its CLI and resolves with its pid; fails if it ended without one. */
export async function spawnedPid(port: AnyActorRef, timeoutMs = 20_000): Promise<number> {
  const pid = () => (port.getSnapshot() as { context: { pid?: number } }).context.pid;
  await waitUntil(() => pid() !== undefined || port.getSnapshot().status !== 'active', 'the port to spawn its CLI', timeoutMs);
  const spawned = pid();
  if (spawned === undefined) throw new Error(`the port ended (${String(port.getSnapshot().status)}) without spawning its CLI: no pid to check`);
  return spawned;
}
