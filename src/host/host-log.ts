/**
 * What of the host's events a person should read, as log entries: restarts, recoveries,
 * failures, journal errors, supervisors giving up. `createHost({ logger })` receives them;
 * `warden acp` writes them to stderr (and every event to `--log-file`). The structured,
 * levelled logger of the observability issue builds on this.
 */
import { describeExit } from '../supervision/exit-reason.js';
import type { HostEvent } from './host.js';

/** One log entry. */
export interface HostLogEntry {
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  /** The event it describes. */
  readonly event: HostEvent;
}

/** The log entry of an event, or `undefined` for the routine ones (starts, state changes). */
export function logEntryOf(event: HostEvent): HostLogEntry | undefined {
  const entry = (level: HostLogEntry['level'], message: string): HostLogEntry => ({ level, message, event });
  switch (event.type) {
    case 'session.restarting':
      return entry('warn', `session ${event.sessionId}: agent process ended (${event.exit}); restart ${event.restarts}`);
    case 'session.recovered':
      return entry('info', `session ${event.sessionId}: resumed after restart ${event.restarts}`);
    case 'session.failed':
      return entry('error', `session ${event.sessionId} failed: ${event.reason}`);
    case 'journal.error':
      return entry('error', `journal error in session ${event.sessionId}: ${event.message}`);
    case 'intensity.exceeded':
      return entry('error', `${event.supervisor}: more than ${event.intensity} restarts in ${event.period} ms; giving up`);
    case 'supervisor.shutdown':
      return event.reason.kind === 'shutdown' ? undefined : entry('error', `${event.supervisor} shut down (${describeExit(event.reason)})`);
    default:
      return undefined;
  }
}

/** An event as one JSON line (errors as `{ name, message }`, actor references left out). */
export function eventJson(event: HostEvent, time: Date = new Date()): string {
  return JSON.stringify({ time: time.toISOString(), ...event }, (_key, value: unknown) => {
    if (value instanceof Error) return { name: value.name, message: value.message };
    if (typeof value === 'object' && value !== null && 'sessionId' in value && 'send' in value) return undefined;
    return value;
  });
}
