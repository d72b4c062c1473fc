/**
 * Canonical JSON: the same text for the same value whatever order its objects' keys came in.
 * Compares resume states and list cursors, and is what a prompt's digest is taken of (so it
 * must not change: digests are journaled).
 */

/** `value` as canonical JSON: objects' keys sorted (by UTF-16 code units), no whitespace; `undefined` members dropped, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
