/**
 * Why an actor stopped running, in OTP's vocabulary.
 *
 * - `normal`: the child finished its work (an XState actor reached `done`).
 * - `shutdown`: the child was asked to stop, or a supervisor gave up; `detail` says why
 *   (OTP's `{shutdown, Detail}`).
 * - `error`: an abnormal exit; `error` is the cause (an XState actor reached `error`).
 * - `killed`: the supervisor stopped the child without waiting (`brutal_kill`, or a
 *   `shutdown` timeout ran out).
 *
 * Exit reasons are plain data so that they can be logged, inspected and persisted; an
 * `error` keeps the original cause for stack traces.
 */
export type ExitReason =
  | { readonly kind: 'normal' }
  | { readonly kind: 'shutdown'; readonly detail?: unknown }
  | { readonly kind: 'error'; readonly error: unknown }
  | { readonly kind: 'killed' };

/** The `normal` exit reason. */
export const normalExit: ExitReason = Object.freeze({ kind: 'normal' });

/** A `shutdown` exit reason, optionally with a detail (OTP's `{shutdown, Detail}`). */
export function shutdownExit(detail?: unknown): ExitReason {
  return detail === undefined ? { kind: 'shutdown' } : { kind: 'shutdown', detail };
}

/** An abnormal exit carrying its cause. */
export function errorExit(error: unknown): ExitReason {
  return { kind: 'error', error };
}

/** The exit of a child the supervisor stopped without waiting. */
export const killedExit: ExitReason = Object.freeze({ kind: 'killed' });

/** Whether `value` has the shape of an {@link ExitReason}. */
export function isExitReason(value: unknown): value is ExitReason {
  if (typeof value !== 'object' || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  return kind === 'normal' || kind === 'shutdown' || kind === 'killed' ||
    (kind === 'error' && 'error' in value);
}

/**
 * Whether OTP counts this exit as normal for `transient` children and significant
 * children: `normal`, `shutdown` and `{shutdown, _}` are; everything else is abnormal.
 */
export function isNormalExit(reason: ExitReason): boolean {
  return reason.kind === 'normal' || reason.kind === 'shutdown';
}

/** A one-line human description, for logs and error messages. */
export function describeExit(reason: ExitReason): string {
  switch (reason.kind) {
    case 'normal':
      return 'normal';
    case 'killed':
      return 'killed';
    case 'shutdown':
      return reason.detail === undefined ? 'shutdown' : `shutdown (${describeDetail(reason.detail)})`;
    case 'error': {
      const error = reason.error;
      if (error instanceof Error) return `error: ${error.name}: ${error.message}`;
      return `error: ${describeDetail(error)}`;
    }
  }
}

function describeDetail(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (detail instanceof Error) return `${detail.name}: ${detail.message}`;
  try {
    return JSON.stringify(detail) ?? String(detail);
  } catch {
    return String(detail);
  }
}

/**
 * The exit reason of a child actor that reached `done`: its output when the output is
 * itself an exit reason (a nested supervisor, or an actor that says why it stopped),
 * otherwise `normal`.
 */
export function exitFromOutput(output: unknown): ExitReason {
  return isExitReason(output) ? output : normalExit;
}

/**
 * A serialisable view of an exit reason: errors become `{ name, message, stack }` so that
 * JSON (logs, inspector frames, tree snapshots) does not turn them into `{}`.
 */
export function serializeExit(reason: ExitReason): Record<string, unknown> {
  if (reason.kind === 'error') return { kind: 'error', error: serializeError(reason.error) };
  if (reason.kind === 'shutdown' && reason.detail !== undefined) {
    return { kind: 'shutdown', detail: serializeDetail(reason.detail) };
  }
  return { kind: reason.kind };
}

function serializeDetail(detail: unknown): unknown {
  if (detail instanceof Error) return serializeError(detail);
  if (typeof detail === 'object' && detail !== null && !Array.isArray(detail)) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(detail)) out[key] = serializeDetail(value);
    return out;
  }
  return detail;
}

/** `{ name, message, stack }` of an error; other thrown values pass through. */
export function serializeError(error: unknown): unknown {
  if (error instanceof Error) {
    const out: Record<string, unknown> = { name: error.name, message: error.message };
    if (error.stack) out.stack = error.stack;
    const code = (error as { code?: unknown }).code;
    if (code !== undefined) out.code = code;
    return out;
  }
  return error;
}
