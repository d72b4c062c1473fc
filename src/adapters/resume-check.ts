/**
 * Checks of resume states that come from outside the adapter: an editor's
 * `_meta["acp-warden/resume"]`, the host's journal (a file anyone with access can edit), a
 * listing. An id in one of them ends up on a CLI's command line (Claude's `--resume`) or in
 * its protocol (Codex's `thread/resume`), so it must have the form the CLI gives its ids,
 * or `--dangerously-skip-permissions` could pass for a session id. A state that fails is
 * refused with -32602 before anything is spawned.
 */
import { RESUME_META_KEY } from '../protocol/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';

/** A verdict on a resume state: fine, or which field is wrong and what it should be. */
export type ResumeCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly field: string; readonly expected: string; readonly got: unknown };

/** The canonical text form of a UUID (8-4-4-4-12 hex digits): Claude Code's session ids and Codex's thread ids. */
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;

/** Whether `value` is a UUID in its canonical text form. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && uuidPattern.test(value);
}

const fine: ResumeCheck = Object.freeze({ ok: true });

/**
 * Checks that `state` (a resume state: absent, or an object) holds, under `key`, nothing or
 * a UUID. `what` names the id for the message ("a Claude Code session id").
 */
export function checkUuidField(state: unknown, key: string, what: string): ResumeCheck {
  if (state === undefined || state === null) return fine;
  if (typeof state !== 'object' || Array.isArray(state)) {
    return { ok: false, field: `_meta["${RESUME_META_KEY}"]`, expected: `an object such as { "${key}": "<${what}>" }`, got: state };
  }
  const value = (state as Record<string, unknown>)[key];
  if (value === undefined || isUuid(value)) return fine;
  return { ok: false, field: `_meta["${RESUME_META_KEY}"].${key}`, expected: `${what}: a UUID (8-4-4-4-12 hex digits, such as 3f14e166-314b-4cc3-b08e-882eb52c9a8d)`, got: value };
}

/** The -32602 error for a failed check, naming the field, the expected form and (shortened) what came. */
export function resumeCheckError(check: Extract<ResumeCheck, { ok: false }>): RpcError {
  const shown = JSON.stringify(check.got) ?? String(check.got);
  const got = shown.length > 80 ? `${shown.slice(0, 80)}…` : shown;
  return RpcError.invalidParams(`Expected ${check.field} to be ${check.expected}, got ${got} (${typeof check.got})`, { field: check.field, expected: check.expected });
}
