/**
 * The host's `session/list` cursor: one opaque string that says where the listing goes on,
 * in the journal's pages or in an agent's (by name), so that an editor pages through both
 * without knowing there are two.
 */

/** Where a `session/list` cursor goes on: the journal's pages, or an agent's. */
export type ListCursor = { readonly journal: string | undefined } | { readonly agent: string; readonly cursor: string };

/** The cursor as an opaque string (base64url JSON). */
export function encodeListCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify('agent' in cursor ? { a: cursor.agent, c: cursor.cursor } : { j: cursor.journal }), 'utf8').toString('base64url');
}

/** Our cursor, or `undefined` for one we did not make. */
export function decodeListCursor(raw: string): ListCursor | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const { a, c, j } = parsed as { a?: unknown; c?: unknown; j?: unknown };
    if (typeof a === 'string' && typeof c === 'string') return { agent: a, cursor: c };
    if (typeof j === 'string') return { journal: j };
  } catch {
    // not ours
  }
  return undefined;
}

