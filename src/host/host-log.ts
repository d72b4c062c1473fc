/**
 * The host's events as log entries: a level and a sentence for each, the event itself kept
 * beside them (so a JSON log carries the same typed facts as `host.on`). Routine facts
 * (starts, state changes) are `debug`; recoveries and orderly stops (a child its supervisor
 * stopped, killed or shut down: `action: 'terminated'` without an error) `info`; crashes,
 * restarts, dropped protocol messages `warn`; failures `error`. So a normal shutdown writes
 * nothing at the default level (warn). `createHost({ logger })` receives them; the log sink
 * (src/inspect/log-sink.ts) filters by level and writes JSON or pretty lines.
 */
import { describeExit } from '../supervision/exit-reason.js';
import type { HostEvent } from './host-event.js';

/** Log levels, least severe first. */
export const logLevels = ['debug', 'info', 'warn', 'error'] as const;

/** A log level. */
export type LogLevel = (typeof logLevels)[number];

/** One log entry. */
export interface HostLogEntry {
  readonly level: LogLevel;
  readonly message: string;
  /** The event it describes. */
  readonly event: HostEvent;
}

/** Whether `level` is at least as severe as `threshold`. */
export function atLeast(level: LogLevel, threshold: LogLevel): boolean {
  return logLevels.indexOf(level) >= logLevels.indexOf(threshold);
}

/** The log entry of an event. */
export function logEntryOf(event: HostEvent): HostLogEntry {
  const entry = (level: LogLevel, message: string): HostLogEntry => ({ level, message, event });
  switch (event.type) {
    case 'agent.started':
      return entry('info', `agent ${event.agent} started`);
    case 'agent.released':
      return entry('info', `agent ${event.agent} stopped: no session open on it`);
    case 'session.opened':
      return entry('info', `session ${event.sessionId} opened on ${event.agent} (${event.how})`);
    case 'session.state':
      return entry('debug', `session ${event.sessionId}: ${event.state}`);
    case 'session.restarting':
      return entry('warn', `session ${event.sessionId}: agent process ended (${event.exit}); restart ${event.restarts}`);
    case 'session.recovered':
      return entry('info', `session ${event.sessionId}: resumed after restart ${event.restarts}`);
    case 'session.failed':
      return entry('error', `session ${event.sessionId} failed: ${event.reason}`);
    case 'session.closed':
      return entry('info', `session ${event.sessionId} closed`);
    case 'session.moved':
      return entry('warn', `session ${event.sessionId} moved to ${event.owner === undefined ? 'no host (released)' : `host ${event.owner}`}${event.epoch === undefined ? '' : ` at epoch ${event.epoch}`}: its agent here was stopped`);
    case 'agent.lineDropped':
      return entry('warn', `agent ${event.agent}${event.sessionId ? ` (session ${event.sessionId})` : ''} printed a line of ${event.bytes} bytes (${event.what}), over the limit of ${event.limit} bytes: skipped unread (raise --max-line-mib to read such lines)`);
    case 'journal.error':
      return entry('error', `journal error${event.sessionId ? ` in session ${event.sessionId}` : ''}: ${event.message}`);
    case 'protocol.dropped':
      return entry('warn', `dropped a message from the ${event.peer} (${event.reason}): ${event.detail}`);
    case 'child.started':
      return entry('debug', `${event.supervisor}: started ${event.childId} (incarnation ${event.incarnation})`);
    case 'child.exited':
      if (event.reason.kind === 'normal' || (event.reason.kind === 'shutdown' && event.reason.detail === undefined)) {
        return entry('debug', `${event.supervisor}: ${event.childId} exited (${describeExit(event.reason)})`);
      }
      // Stopped by its supervisor (a shutdown, a close, a group restart): killed or shut down as
      // asked is an orderly stop, not news. Only an error on the way out is.
      if (event.action === 'terminated' && event.reason.kind !== 'error') {
        return entry('info', `${event.supervisor}: stopped ${event.childId} (${event.reason.kind})`);
      }
      return entry('warn', `${event.supervisor}: ${event.childId} exited: ${describeExit(event.reason)} -> ${event.action}`);
    case 'child.restarting':
      return entry('debug', `${event.supervisor}: ${event.childId} restarts in ${event.delay} ms (attempt ${event.attempt + 1})`);
    case 'child.restarted':
      return entry('info', `${event.supervisor}: restarted ${event.childId} (restart #${event.restarts})`);
    case 'child.startFailed':
      return entry('warn', `${event.supervisor}: ${event.childId} failed to start`);
    case 'intensity.exceeded':
      return entry('error', `${event.supervisor}: more than ${event.intensity} restarts in ${event.period} ms; giving up`);
    case 'supervisor.shutdown':
      return event.reason.kind === 'shutdown' && event.reason.detail === undefined
        ? entry('debug', `${event.supervisor} shut down`)
        : entry('error', `${event.supervisor} shut down (${describeExit(event.reason)})`);
  }
}

/** Errors as `{ name, message }`; actor references left out. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (typeof value === 'object' && value !== null && 'sessionId' in value && 'send' in value) return undefined;
  return value;
}
