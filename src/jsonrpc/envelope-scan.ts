/**
 * Reading the envelope of a message too long to parse: its `id` and what it is (request,
 * notification, response), from its first and last bytes only, so that a line over the
 * limit can still be answered by its id. Only top-level members count (a nested `"id"` in
 * the params is not the message's).
 */
import type { JsonRpcId } from './message.js';

/** What the edges of a message line tell. */
export interface Envelope {
  /** The message's id, when it could be read; `null` otherwise. */
  readonly id: JsonRpcId | null;
  /** `request` (method and id), `notification` (method, no id seen), `response` (result or error), or `unknown`. */
  readonly kind: 'request' | 'notification' | 'response' | 'unknown';
  /** The method, when it could be read. */
  readonly method: string | undefined;
}

/** Reads the envelope from the start (`head`) and the end (`tail`) of a message line. */
export function scanEnvelope(head: string, tail: string): Envelope {
  const members = leadingMembers(head);
  // Members written after the params (`...}, "id": 7, "method": "m"}`) are read from the end.
  const trailing = members.complete ? undefined : trailingMembers(tail);
  const id = idOf(members.scalars.id) ?? trailing?.id;
  const methodValue = members.scalars.method ?? trailing?.method;
  const method = typeof methodValue === 'string' ? methodValue : undefined;
  const keys = new Set([...members.keys, ...(trailing?.keys ?? [])]);
  let kind: Envelope['kind'] = 'unknown';
  if (keys.has('result') || keys.has('error')) kind = 'response';
  else if (method !== undefined && id !== undefined) kind = 'request';
  // No id among the top-level members either edge shows: what is unseen lies inside a value.
  else if (method !== undefined && (members.complete || trailing?.ended)) kind = 'notification';
  return { id: id ?? null, kind, method };
}

const whitespace = new Set([' ', '\t', '\n', '\r']);

/** What the start of a JSON object line tells: its top-level keys and the scalar values read whole. */
export interface LeadingMembers {
  /** Every top-level key seen, the last one possibly with its value cut off. */
  readonly keys: Set<string>;
  /** The top-level members whose value is a string, number, boolean or null, read whole. */
  readonly scalars: Record<string, string | number | boolean | null>;
  /** The whole object was read. */
  complete: boolean;
}

/** A JSON-RPC id: a string or a finite number. */
function idOf(value: unknown): JsonRpcId | undefined {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : undefined;
}

/**
 * What a JSON line was, from its head (a line skipped as too long), for logs: its top-level
 * `type` (Claude Code's stream-json) or `method` (JSON-RPC), say `type user`.
 */
export function lineKindOf(head: string): string {
  const { keys, scalars } = leadingMembers(head);
  if (typeof scalars.type === 'string') return `type ${scalars.type.slice(0, 64)}`;
  if (typeof scalars.method === 'string') return `method ${scalars.method.slice(0, 64)}`;
  // Keys only: values can carry anything, credentials included.
  if (keys.size > 0) return `an object with keys ${[...keys].slice(0, 8).map((key) => key.slice(0, 40)).join(', ')}`;
  return 'a line of unknown kind';
}

/**
 * The top-level members of the JSON object `text` starts (the head of a line too long to
 * parse): keys, and the scalar values that end within `text` (`id` and `method` always read
 * as scalars). Nested values are skipped; stops where `text` does.
 */
export function leadingMembers(text: string): LeadingMembers {
  const found: LeadingMembers = { keys: new Set(), scalars: Object.create(null) as Record<string, string | number | boolean | null>, complete: false };
  let at = skipSpace(text, 0);
  if (text[at] !== '{') return found;
  at += 1;
  for (;;) {
    at = skipSpace(text, at);
    if (text[at] === '}') {
      found.complete = true;
      return found;
    }
    const key = readString(text, at);
    if (!key) return found;
    at = skipSpace(text, key.end);
    if (text[at] !== ':') return found;
    at = skipSpace(text, at + 1);
    found.keys.add(key.value);
    if ((text[at] !== '{' && text[at] !== '[') || key.value === 'id' || key.value === 'method') {
      const value = readScalar(text, at);
      if (!value) return found;
      found.scalars[key.value] = value.value as string | number | boolean | null;
      at = value.end;
    } else {
      const end = skipValue(text, at);
      if (end < 0) return found;
      at = end;
    }
    at = skipSpace(text, at);
    if (text[at] === ',') at += 1;
    else if (text[at] === '}') {
      found.complete = true;
      return found;
    } else return found;
  }
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && whitespace.has(text[at] as string)) at++;
  return at;
}

/** A JSON string starting at `at`, decoded; `undefined` when it does not end within `text`. */
function readString(text: string, at: number): { value: string; end: number } | undefined {
  if (text[at] !== '"') return undefined;
  const end = stringEnd(text, at);
  if (end < 0) return undefined;
  try {
    return { value: JSON.parse(text.slice(at, end)) as string, end };
  } catch {
    return undefined;
  }
}

/** The index just past the string starting at `at`, or -1. */
function stringEnd(text: string, at: number): number {
  for (let index = at + 1; index < text.length; index++) {
    const char = text[index];
    if (char === '\\') index++;
    else if (char === '"') return index + 1;
  }
  return -1;
}

/** A string, number, boolean or null starting at `at`. */
function readScalar(text: string, at: number): { value: unknown; end: number } | undefined {
  if (text[at] === '"') return readString(text, at);
  const match = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at, at + 64));
  if (!match) return undefined;
  const end = at + match[0].length;
  if (end >= text.length) return undefined; // a number may go on past what we have
  return { value: JSON.parse(match[0]) as unknown, end };
}

/** The index just past the value starting at `at` (objects and arrays skipped whole), or -1. */
function skipValue(text: string, at: number): number {
  const first = text[at];
  if (first === '"') return stringEnd(text, at);
  if (first !== '{' && first !== '[') {
    const scalar = readScalar(text, at);
    return scalar ? scalar.end : -1;
  }
  let depth = 0;
  for (let index = at; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      index = stringEnd(text, index) - 1;
      if (index < 0) return -1;
    } else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/** The top-level members the end of a line shows, read backwards from its closing brace. */
interface TrailingMembers {
  readonly keys: Set<string>;
  id: JsonRpcId | undefined;
  method: unknown;
  /** The text ends as an object does (its closing brace, outside any string). */
  ended: boolean;
}

/**
 * Reads `tail` backwards: from the closing brace, member by member (`"key": value`), until
 * a value runs past the start of `tail` (the long params, most often) or the opening brace.
 */
function trailingMembers(tail: string): TrailingMembers {
  const found: TrailingMembers = { keys: new Set(), id: undefined, method: undefined, ended: false };
  let at = skipSpaceBack(tail, tail.length - 1);
  if (tail[at] !== '}') return found;
  found.ended = true;
  at = skipSpaceBack(tail, at - 1);
  if (tail[at] === '{') return found;
  for (;;) {
    const valueEnd = at + 1;
    const valueStart = valueStartBack(tail, at);
    if (valueStart < 0) return found;
    at = skipSpaceBack(tail, valueStart - 1);
    if (tail[at] !== ':') return found;
    at = skipSpaceBack(tail, at - 1);
    if (tail[at] !== '"') return found;
    const keyStart = stringStartBack(tail, at);
    if (keyStart < 0) return found;
    const key = readString(tail, keyStart);
    if (!key) return found;
    found.keys.add(key.value);
    if (key.value === 'id' || key.value === 'method') {
      let value: unknown;
      try {
        value = JSON.parse(tail.slice(valueStart, valueEnd)) as unknown;
      } catch {
        return found;
      }
      if (key.value === 'id') found.id = idOf(value);
      if (key.value === 'method') found.method = value;
    }
    at = skipSpaceBack(tail, keyStart - 1);
    if (tail[at] !== ',') return found; // the opening brace, or not an object member
    at = skipSpaceBack(tail, at - 1);
  }
}

function skipSpaceBack(text: string, at: number): number {
  while (at >= 0 && whitespace.has(text[at] as string)) at--;
  return at;
}

/**
 * Whether the quote at `at` opens or closes a string (an even run of backslashes before it).
 * A run that reaches the start of `text` may go on before it: not known, so no.
 */
function isQuote(text: string, at: number): boolean {
  if (text[at] !== '"') return false;
  let index = at - 1;
  while (index >= 0 && text[index] === '\\') index--;
  return index >= 0 && (at - 1 - index) % 2 === 0;
}

/** The index of the quote opening the string whose closing quote is at `end`, or -1. */
function stringStartBack(text: string, end: number): number {
  for (let index = end - 1; index >= 0; index--) if (isQuote(text, index)) return index;
  return -1;
}

/** The start of the value ending at `end` (objects and arrays skipped whole), or -1 when it starts before `text`. */
function valueStartBack(text: string, end: number): number {
  const last = text[end];
  if (last === '"') return stringStartBack(text, end);
  if (last !== '}' && last !== ']') {
    let index = end;
    while (index >= 0 && /[-+.\w]/.test(text[index] as string)) index--;
    return index === end || index < 0 ? -1 : index + 1;
  }
  let depth = 0;
  for (let index = end; index >= 0; index--) {
    const char = text[index];
    if (char === '"') {
      index = stringStartBack(text, index);
      if (index < 0) return -1;
    } else if (char === '}' || char === ']') depth++;
    else if (char === '{' || char === '[') {
      depth--;
      if (depth === 0) return index;
    }
  }
  return -1;
}
