/**
 * The digest of a prompt, kept with an idempotent prompt in the journal: a retry of a key is the
 * same prompt when its digest is the same. Hex SHA-256 of the prompt's canonical JSON: its
 * content blocks as JSON with every object's keys sorted (by UTF-16 code units) and no
 * whitespace, so that a client re-serialising the same blocks in another key order sends the
 * same prompt, while any change of a value (text, a block's order, an added field) is another one.
 */
import { createHash } from 'node:crypto';

/** `value` as canonical JSON: objects' keys sorted, no whitespace; `undefined` members dropped, as JSON.stringify does. */
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

/** Hex SHA-256 of the canonical JSON of a prompt's content blocks. */
export function promptDigestOf(prompt: unknown): string {
  return createHash('sha256').update(canonicalJson(prompt)).digest('hex');
}
