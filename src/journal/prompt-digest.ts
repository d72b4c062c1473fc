/**
 * The digest of a prompt, kept with an idempotent prompt in the journal: a retry of a key is the
 * same prompt when its digest is the same. Hex SHA-256 of the prompt's canonical JSON: its
 * content blocks as JSON with every object's keys sorted (by UTF-16 code units) and no
 * whitespace, so that a client re-serialising the same blocks in another key order sends the
 * same prompt, while any change of a value (text, a block's order, an added field) is another one.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** Hex SHA-256 of the canonical JSON of a prompt's content blocks. */
export function promptDigestOf(prompt: unknown): string {
  return createHash('sha256').update(canonicalJson(prompt)).digest('hex');
}
