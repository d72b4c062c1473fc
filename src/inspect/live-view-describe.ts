/**
 * Reading what an inspection event carries, by shape and not by code: what kind of actor a
 * context shows (port, supervisor, pending request), and the one-line words the view uses
 * for a state value, an error, an output or exit reason, a hub's clients and a session's
 * owner. Text is cut to a bounded length, so that memory stays bounded.
 */
import type { LiveActorKind, LiveOwnerView } from './live-view-data.js';

const MAX_TEXT = 300;

/** A state value as text: `ready`, or `parent.child` for nested states. */
export function stateText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (isObject(value)) {
    const [first] = Object.entries(value);
    return first ? `${first[0]}.${stateText(first[1])}` : '';
  }
  return String(value);
}

/** A hub's clients in one line: `a (c1): s1 controller at seq 42; b (c2): s1 observer behind at seq 7`. */
export function clientsDetail(clients: readonly unknown[]): string {
  if (clients.length === 0) return 'no clients';
  return clients
    .filter(isObject)
    .map((client) => {
      const sessions = Array.isArray(client.sessions) ? client.sessions.filter(isObject) : [];
      const name = typeof client.peer === 'string' ? `${client.peer} (${String(client.connectionId)})` : String(client.connectionId);
      const where = sessions.map((session) => `${String(session.sessionId)} ${String(session.role)}${session.state === 'behind' ? ' behind' : ''}${typeof session.delivered === 'number' ? ` at seq ${session.delivered}` : ''}`).join(', ');
      return where ? `${name}: ${where}` : `${name}: no session`;
    })
    .join('; ');
}

/** A session chart's owner (`context.owner`), each part checked; nothing when it names none (a store without owners). */
export function ownerOf(value: unknown): { owner?: LiveOwnerView } {
  if (!isObject(value)) return {};
  const owner: LiveOwnerView = {
    ...(typeof value.hostId === 'string' ? { hostId: cut(value.hostId) } : {}),
    ...(typeof value.hostName === 'string' ? { hostName: cut(value.hostName) } : {}),
    ...(typeof value.epoch === 'number' && Number.isFinite(value.epoch) ? { epoch: value.epoch } : {}),
    here: value.here !== false,
  };
  const named = owner.hostId !== undefined || owner.hostName !== undefined || owner.epoch !== undefined;
  return named || !owner.here ? { owner } : {};
}

/** What kind of actor a snapshot's context shows, by its shape. */
export function classify(context: Record<string, unknown>): LiveActorKind {
  if (Array.isArray(context.command) && typeof context.linesIn === 'number') return 'port';
  if (typeof context.strategy === 'string' && typeof context.dynamic === 'boolean') return 'supervisor';
  if (typeof context.method === 'string' && typeof context.sentAt === 'number') return 'request';
  return 'actor';
}

/** A machine's definition (JSON text in the inspection event), or `undefined` when it does not parse. */
export function parseDefinition(definition: unknown): unknown {
  if (typeof definition !== 'string') return undefined;
  try {
    return JSON.parse(definition) as unknown;
  } catch {
    return undefined;
  }
}

/** An error as one line: its message (an `{ name, message }` from the inspector, or a string). */
export function describeError(error: unknown): string {
  if (isObject(error) && typeof error.message === 'string') return cut(firstLine(error.message));
  if (typeof error === 'string') return cut(firstLine(error));
  return 'error';
}

/** A done actor's output as one line: an exit reason (`shutdown (reached_max_restart_intensity)`) or its JSON. */
export function describeOutput(output: unknown): string {
  if (output === undefined || output === null) return 'done';
  if (isObject(output) && typeof output.message === 'string') return cut(firstLine(output.message));
  if (isObject(output) && typeof output.kind === 'string') {
    if (output.kind === 'error') return describeError(output.error);
    const detail = output.detail;
    if (detail === undefined) return output.kind;
    if (typeof detail === 'string') return `${output.kind} (${detail})`;
    // A port's stop: how its process ended.
    if (isObject(detail) && isObject(detail.reason) && typeof detail.reason.kind === 'string') {
      const reason = detail.reason;
      const how = [reason.kind, typeof reason.code === 'number' ? `code ${reason.code}` : '', typeof reason.signal === 'string' ? reason.signal : ''].filter(Boolean).join(', ');
      return `${output.kind} (${how})`;
    }
    return cut(`${output.kind} (${JSON.stringify(detail)})`);
  }
  return cut(typeof output === 'string' ? output : JSON.stringify(output));
}

/** The first line of a text. */
export function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? text;
}

/** A text cut to at most `MAX_TEXT` characters. */
export function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

/** Whether a value is a plain object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
