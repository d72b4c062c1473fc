/**
 * What may leave the process in an inspection event: a copy of any value with errors as
 * `{ name, message, stack }` (JSON turns an `Error` into `{}`), secrets redacted (values
 * under secret-like keys and environments whole; in every string, wherever they sit, the
 * secret values the host and its agents' environments hold and anything shaped like a key,
 * a `Bearer` token or `NAME=value` for a secret-like NAME: src/port/redact.ts), and large
 * payloads cut down so the inspector stays usable. The input is never changed.
 */
import { knownSecretValues, redactSecrets, REDACTED } from '../port/redact.js';

export { REDACTED };

/** Limits of {@link inspectionPayload}. */
export interface PayloadLimits {
  /** Characters kept of a string (default 2000). */
  readonly maxString?: number;
  /** Items kept of an array, entries of an object (default 100). */
  readonly maxItems?: number;
  /** Nesting kept (default 8); deeper values become `'[…]'`. */
  readonly maxDepth?: number;
}

/** How far past a string's cut redaction looks (longer than any key). */
const cutMargin = 512;

/** Keys whose values are secrets, whatever they hold. */
const secretKey = /(api[-_]?key|token|secret|password|passwd|authorization|cookie|credential|private[-_]?key|^env$|environment)/iu;

/** A copy of `value` safe to send to an inspector (see the module comment). */
export function inspectionPayload(value: unknown, limits: PayloadLimits = {}): unknown {
  const maxString = limits.maxString ?? 2000;
  const maxItems = limits.maxItems ?? 100;
  const maxDepth = limits.maxDepth ?? 8;
  const seen = new WeakSet<object>();
  const secrets = knownSecretValues();
  const copy = (input: unknown, depth: number): unknown => {
    if (typeof input === 'string') {
      if (input.length <= maxString) return redactSecrets(input, secrets);
      // Redacted a little past the cut, then cut: a key the cut splits is still found whole.
      const kept = redactSecrets(input.slice(0, maxString + cutMargin), secrets).slice(0, maxString);
      return `${kept}… (${input.length - maxString} more characters)`;
    }
    if (typeof input === 'bigint') return input.toString();
    if (typeof input === 'function') return `[function ${input.name || 'anonymous'}]`;
    if (typeof input !== 'object' || input === null) return input;
    if (seen.has(input)) return '[circular]';
    if (depth >= maxDepth) return '[…]';
    seen.add(input);
    try {
      if (input instanceof Error) {
        const error: Record<string, unknown> = { name: input.name, message: copy(input.message, depth + 1), stack: copy(input.stack, depth + 1) };
        if ('cause' in input && input.cause !== undefined) error.cause = copy(input.cause, depth + 1);
        return error;
      }
      // Live resources (actors, processes, sockets) are not data: name them only.
      if (isActorRef(input)) return `[actor ${(input as { id?: string }).id ?? ''}]`;
      if (Array.isArray(input)) {
        const items = input.slice(0, maxItems).map((item) => copy(item, depth + 1));
        if (input.length > maxItems) items.push(`… ${input.length - maxItems} more items`);
        return items;
      }
      if (input instanceof Map) return copy(Object.fromEntries(input), depth);
      if (input instanceof Set) return copy([...input], depth);
      const entries = Object.entries(input);
      const out: Record<string, unknown> = {};
      for (const [key, item] of entries.slice(0, maxItems)) out[key] = secretKey.test(key) ? REDACTED : copy(item, depth + 1);
      if (entries.length > maxItems) out['…'] = `${entries.length - maxItems} more entries`;
      return out;
    } finally {
      seen.delete(input);
    }
  };
  return copy(value, 0);
}

function isActorRef(value: object): boolean {
  return typeof (value as { send?: unknown }).send === 'function' && typeof (value as { getSnapshot?: unknown }).getSnapshot === 'function';
}
