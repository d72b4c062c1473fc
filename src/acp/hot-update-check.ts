/**
 * A cheap structural check for the `session/update` notifications an agent sends most: text
 * chunks (`agent_message_chunk`, `agent_thought_chunk`, `user_message_chunk`) and
 * `tool_call_update`. The SDK's zod schema costs several µs an update (a union of intersections,
 * every object copied); for these shapes its answer is known: the same value, copied. So a
 * notification that passes this check is used as it came; anything else (another kind, an
 * unknown key, a value of the wrong type, a field zod would drop or rewrite) goes to the full
 * schema, which gives the same verdict and the same error as before.
 *
 * The rule for "passes": only what the schema keeps unchanged. Unknown keys are stripped by
 * zod and invalid optional fields replaced by nothing, so either sends the value to the schema.
 */

const chunkKinds = new Set(['agent_message_chunk', 'agent_thought_chunk', 'user_message_chunk']);
const toolKinds = new Set(['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other']);
const toolStatuses = new Set(['pending', 'in_progress', 'completed', 'failed']);

type Plain = Record<string, unknown>;

/** A JSON object (not null, not an array) made by a literal or JSON.parse. */
function isPlain(value: unknown): value is Plain {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

// The checks below see only keys that are present: a present `undefined` (never from JSON, but
// possible from an in-process agent) goes to the schema too.

/** `_meta`: null, or a record zod copies key for key (an own `__proto__` key it would not). */
function isMeta(value: unknown): boolean {
  return value === null || (isPlain(value) && !Object.hasOwn(value, '__proto__'));
}

function isOptionalString(value: unknown): boolean {
  return value === null || typeof value === 'string';
}

/** `{ type: 'text', text, _meta? }`: a text content block without annotations. */
function isTextBlock(value: unknown): boolean {
  if (!isPlain(value)) return false;
  for (const key in value) {
    if (key === 'type') {
      if (value.type !== 'text') return false;
    } else if (key === 'text') {
      if (typeof value.text !== 'string') return false;
    } else if (key === '_meta') {
      if (!isMeta(value._meta)) return false;
    } else return false;
  }
  return value.type === 'text' && typeof value.text === 'string';
}

function isChunk(update: Plain): boolean {
  for (const key in update) {
    const value = update[key];
    switch (key) {
      case 'sessionUpdate':
        continue;
      case 'content':
        if (!isTextBlock(value)) return false;
        continue;
      case 'messageId':
        if (!isOptionalString(value)) return false;
        continue;
      case '_meta':
        if (!isMeta(value)) return false;
        continue;
      default:
        return false;
    }
  }
  return update.content !== undefined;
}

/** One item of a tool call's `content`: `{ type: 'content', content: <text block> }` or a terminal. */
function isToolContent(value: unknown): boolean {
  if (!isPlain(value)) return false;
  let required = 0;
  for (const key in value) {
    const field = value[key];
    if (key === 'type') continue;
    if (key === '_meta') {
      if (!isMeta(field)) return false;
    } else if (key === 'content' && value.type === 'content') {
      if (!isTextBlock(field)) return false;
      required += 1;
    } else if (key === 'terminalId' && value.type === 'terminal') {
      if (typeof field !== 'string') return false;
      required += 1;
    } else return false;
  }
  return required === 1;
}

function isToolCallUpdate(update: Plain): boolean {
  for (const key in update) {
    const value = update[key];
    switch (key) {
      case 'sessionUpdate':
        continue;
      case 'toolCallId':
        if (typeof value !== 'string') return false;
        continue;
      case 'kind':
        if (value !== null && !toolKinds.has(value as string)) return false;
        continue;
      case 'status':
        if (value !== null && !toolStatuses.has(value as string)) return false;
        continue;
      case 'title':
      case 'name':
        if (!isOptionalString(value)) return false;
        continue;
      case 'rawInput':
      case 'rawOutput':
        // Kept as they are, whatever they hold.
        if (value === undefined) return false;
        continue;
      case 'content':
        if (value === null) continue;
        if (!Array.isArray(value) || !value.every(isToolContent)) return false;
        continue;
      case '_meta':
        if (!isMeta(value)) return false;
        continue;
      default:
        // locations (a uint32 check per line) and anything unknown: the full schema.
        return false;
    }
  }
  return typeof update.toolCallId === 'string';
}

/**
 * Whether `params` is a `SessionNotification` of a hot kind that the SDK's schema would return
 * unchanged (as a deep-equal copy). `false` means "validate it fully", not "invalid".
 */
export function isHotSessionUpdate(params: unknown): boolean {
  if (!isPlain(params)) return false;
  for (const key in params) {
    if (key === 'sessionId') {
      if (typeof params.sessionId !== 'string') return false;
    } else if (key === '_meta') {
      if (!isMeta(params._meta)) return false;
    } else if (key !== 'update') return false;
  }
  if (typeof params.sessionId !== 'string') return false;
  const update = params.update;
  if (!isPlain(update)) return false;
  const kind = update.sessionUpdate;
  if (typeof kind !== 'string') return false;
  if (chunkKinds.has(kind)) return isChunk(update);
  if (kind === 'tool_call_update') return isToolCallUpdate(update);
  return false;
}
