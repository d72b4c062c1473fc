/**
 * What may leave the process in an inspection event: a copy of any value with errors as
 * `{ name, message, stack }` (JSON turns an `Error` into `{}`), secrets redacted (API keys,
 * tokens, environments), and large payloads cut down so the inspector stays usable. Pure:
 * the input is never changed.
 */

/** Limits of {@link inspectionPayload}. */
export interface PayloadLimits {
  /** Characters kept of a string (default 2000). */
  readonly maxString?: number;
  /** Items kept of an array, entries of an object (default 100). */
  readonly maxItems?: number;
  /** Nesting kept (default 8); deeper values become `'[…]'`. */
  readonly maxDepth?: number;
}

/** Keys whose values are secrets, whatever they hold. */
const secretKey = /(api[-_]?key|token|secret|password|passwd|authorization|cookie|credential|private[-_]?key|^env$|environment)/iu;
/** Values that look like keys even under innocent names (`sk-…`, `Bearer …`). */
const secretValue = /^(sk-[A-Za-z0-9_-]{8,}|sk-ant-[A-Za-z0-9_-]{8,}|Bearer\s+\S{8,}|gh[pousr]_[A-Za-z0-9]{20,})/u;

/** The redaction mark. */
export const REDACTED = '[redacted]';

/** A copy of `value` safe to send to an inspector (see the module comment). */
export function inspectionPayload(value: unknown, limits: PayloadLimits = {}): unknown {
  const maxString = limits.maxString ?? 2000;
  const maxItems = limits.maxItems ?? 100;
  const maxDepth = limits.maxDepth ?? 8;
  const seen = new WeakSet<object>();
  const copy = (input: unknown, depth: number): unknown => {
    if (typeof input === 'string') {
      if (secretValue.test(input)) return REDACTED;
      return input.length > maxString ? `${input.slice(0, maxString)}… (${input.length - maxString} more characters)` : input;
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
