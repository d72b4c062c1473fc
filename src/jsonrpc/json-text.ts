/**
 * JSON text made once and reused. A relayed update was serialized twice on warden's hot path:
 * into its journal entry, then into the editor's line, each time costing about as much as the
 * rest of that step (docs/benchmarks.md, "Relay"). Now the host serializes the update once and
 * hands the text along beside it: an object that carries a member's text
 * ({@link withMemberText}) is written by {@link messageText} with that text spliced in, by the
 * journal (src/journal/entry-text.ts) and by the editor's transport alike.
 *
 * The text rides on a symbol-keyed property, which `JSON.stringify` and every reader of the
 * object ignore. It names the member and the value it was made from: a copy of the object whose
 * member was replaced (a gated or re-addressed update) is serialized afresh, never with a stale text.
 */

const memberTextKey = Symbol('acp-warden/member-text');

/** A member's text, and the value it was made from. */
interface MemberText {
  readonly key: string;
  readonly value: unknown;
  readonly text: string;
}

type Carrier = Record<string | symbol, unknown>;

/**
 * `object`, carrying `text` as the JSON of its member `key` (as it is now; by default made here,
 * once: see the module's comment).
 */
export function withMemberText<T extends object>(object: T, key: keyof T & string, text: string = JSON.stringify(object[key])): T {
  const member: MemberText = { key, value: object[key], text };
  (object as Carrier)[memberTextKey] = member;
  return object;
}

/** The text `object` carries for its member `key`, when that member is still the value it was made from. */
export function memberTextOf(object: object, key: string): string | undefined {
  const member = (object as Carrier)[memberTextKey] as MemberText | undefined;
  return member !== undefined && member.key === key && (object as Carrier)[key] === member.value ? member.text : undefined;
}

/** Whether `value` is an object literal's kind (the only kind spliced: its keys are what `JSON.stringify` writes). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** Whether `value` or a plain object among its members, `depth` levels down, carries a member's text. */
function carriesText(value: Record<string, unknown>, depth: number): boolean {
  if ((value as Carrier)[memberTextKey] !== undefined) return true;
  if (depth <= 1) return false;
  for (const key in value) {
    const member = value[key];
    if (typeof member === 'object' && member !== null && isPlainObject(member) && carriesText(member, depth - 1)) return true;
  }
  return false;
}

/**
 * Texts of short strings: a message's keys and many of its values repeat (`jsonrpc`, `2.0`,
 * `session/update`, a session's id), and a lookup costs less than a `JSON.stringify` call.
 */
const shortTexts = new Map<string, string>();
const shortTextsKept = 1024;
const shortTextLength = 80;

function stringText(value: string): string {
  if (value.length > shortTextLength) return JSON.stringify(value);
  let text = shortTexts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    if (shortTexts.size < shortTextsKept) shortTexts.set(value, text);
  }
  return text;
}

/** The text of `value`, members' texts spliced in down to `depth` levels of plain objects. */
function spliced(value: unknown, depth: number): string | undefined {
  // The common members first, written as JSON.stringify writes them.
  if (typeof value === 'string') return stringText(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (depth > 0 && isPlainObject(value) && typeof value.toJSON !== 'function') {
    const carried = (value as Carrier)[memberTextKey] as MemberText | undefined;
    let out = '{';
    for (const key in value) {
      const member = value[key];
      const text = carried !== undefined && carried.key === key && carried.value === member ? carried.text : spliced(member, depth - 1);
      // What JSON.stringify leaves out (undefined, a function, a symbol), left out here too.
      if (text === undefined) continue;
      out += `${out.length === 1 ? '' : ','}${stringText(key)}:${text}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value);
}

/**
 * `JSON.stringify(value)`, byte for byte, with the texts carried by `value` and by plain objects
 * among its members, down to `depth` levels (a message, its params: 2), spliced in. Without any
 * it is `JSON.stringify` itself.
 */
export function messageText(value: object, depth = 2): string {
  if (!isPlainObject(value) || !carriesText(value, depth)) return JSON.stringify(value);
  return spliced(value, depth) as string;
}
