/**
 * `TRACEPARENT` and `TRACESTATE` in the environment of every agent process warden spawns,
 * set through the port's spawn hook (src/port/spawn-env.ts): the context it is started in
 * (see `SessionTraces.spawnContext`: the restart span for a process restarted, else the
 * request being served: `initialize` for a native agent's process, the session span for a
 * process per session). An agent whose OpenTelemetry SDK reads them joins the same trace.
 */
import { setSpawnEnvironment } from '../port/spawn-env.js';
import type { SessionTraces } from './session-traces.js';
import { traceEnvironmentOf } from './trace-meta.js';

/** Sets the hook for `traces`; the function returned removes it. */
export function propagateToSpawns(traces: SessionTraces): () => void {
  const previous = setSpawnEnvironment(() => {
    const context = traces.spawnContext();
    return context ? traceEnvironmentOf(context) : undefined;
  });
  return () => {
    setSpawnEnvironment(previous);
  };
}
