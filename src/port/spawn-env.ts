/**
 * Variables added to every process a port spawns, at the moment it spawns: the hook through
 * which telemetry (src/telemetry/) hands an agent the trace context it was started in
 * (`TRACEPARENT`, `TRACESTATE`), so that an agent that traces joins warden's trace. None is
 * set unless a program sets a provider; the port then pays one check per spawn.
 */

/** Gives the variables for a process about to be spawned (read at that moment, not when the port was made). */
export type SpawnEnvironmentProvider = () => Readonly<Record<string, string>> | undefined;

let provider: SpawnEnvironmentProvider | undefined;

/** Sets (or, with `undefined`, removes) the provider; returns the one it replaced. */
export function setSpawnEnvironment(next: SpawnEnvironmentProvider | undefined): SpawnEnvironmentProvider | undefined {
  const previous = provider;
  provider = next;
  return previous;
}

/** `env` with the provider's variables on top (the provider's win: they describe this very spawn); `env` itself when there is none. */
export function withSpawnEnvironment(env: Record<string, string>): Record<string, string> {
  if (!provider) return env;
  let added: Readonly<Record<string, string>> | undefined;
  try {
    added = provider();
  } catch (error) {
    // A provider's bug must not stop an agent from starting: it becomes a warning.
    process.emitWarning(`the spawn environment provider threw: ${error instanceof Error ? error.message : String(error)}`, 'AcpWardenSpawnEnvironmentWarning');
    return env;
  }
  return added ? { ...env, ...added } : env;
}
