/**
 * How deep a message's JSON may nest. `JSON.parse` takes any depth, but nearly everything after
 * it recurses (`JSON.stringify` when the journal writes a prompt, schema checks, copies): a
 * prompt 20,000 objects deep overflowed the stack in the journal. So the connection checks the
 * depth of what it was sent once, right after the parse, for every method and both directions,
 * and refuses what is deeper before anyone else sees it (connection.ts).
 */

/**
 * The deepest a message's `params`, `result` or `error` may nest, counting that value as
 * level 1: `{ "_meta": { "a": 1 } }` is 2 deep. serde_json (Zed, agents written in Rust) stops
 * at 128 levels for a whole message, so nothing a real peer sends or reads comes near, while
 * the deepest ACP shapes (a resource in a content block in a tool call) need under 10.
 */
export const maxParamsDepth = 128;

/**
 * Whether `value` nests objects or arrays more than `limit` levels deep (`value` itself
 * being level 1). The recursion goes at most `limit` frames down, whatever the depth of
 * `value`: it stops as soon as the limit is passed.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit < 1) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) if (nestsDeeperThan((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}
