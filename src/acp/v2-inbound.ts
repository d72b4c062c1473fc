/**
 * An ACP v2 agent's `session/update`s as the journal keeps them: v1's shapes, the journal's
 * (version-neutral for warden: src/acp/v2-updates.ts maps them out again for a v2 client). The
 * inverse of {@link updateToV2} where v1 can say the same thing; where it cannot, the nearest
 * thing a v1 client can show, said here once:
 *
 * - A tool call is created by its first `tool_call_update` (v2 upserts by id): v1 `tool_call`
 *   (its `title` the v2 title, else its name, else its id), later ones `tool_call_update`. v2's
 *   `cancelled` (and unstable `paused`) have no v1 status: `failed` and `in_progress`, the v2
 *   status kept in `_meta["acp-warden/v2Status"]`; its `capabilities` (what a client may cancel)
 *   in `_meta["acp-warden/v2Capabilities"]`, given back as they came to a v2 client.
 * - `tool_call_content_chunk` appends to the tool call's content; v1 content is replaced whole,
 *   so the update carries the content so far ({@link InboundState} keeps it).
 * - A diff carries changed paths and a patch, not both texts: v1 content of the patch as text
 *   (a `diff` fence), the first changed path in `_meta["acp-warden/v2Diff"]` with the diff itself.
 *   A terminal is the agent's own (v2 has no client terminals): text naming it.
 * - A whole message (`user_message`, `agent_message`, `agent_thought`: content replaced by id)
 *   becomes one chunk per block with its `messageId`; v1 appends, so a replacement of content
 *   already shown shows both.
 * - A plan is `plan` with its entries (v1 has one plan per session); commands and config
 *   options lose their v2 type tags (`configId` is v1's `id`).
 * - `state_update` is not an update of the conversation: the turn reads it ({@link turnEndFromV2}:
 *   `idle` ends the prompt a v2 agent only acknowledged, with its stop reason or its error).
 * - Kinds v1 does not have (`terminal_update`, `terminal_output_chunk`, compaction, custom `_`
 *   kinds) are kept as they came: the journal holds them, a v2 client gets them back as they
 *   were, a v1 client's gate decides.
 */
import type { AvailableCommand, ContentBlock, SessionConfigOption, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import type { TurnEnd } from './v2-turn-state.js';
import { V2_STATUS_META_KEY } from './v2-updates.js';
import { type Cancellable, V2_CAPABILITIES_META_KEY, cancellable, noteCancellable } from './v2-cancellable.js';

/** What the mapping remembers of one session's tool calls (ids seen, content so far) and of the work the client may cancel. */
export interface InboundState {
  readonly toolCalls: Map<string, ToolCallContent[]>;
  /** What advertises `capabilities.cancel` now (v2-cancellable.ts), by tool call and by terminal. */
  readonly cancellable: Cancellable;
}

/** A fresh state for a session. */
export function inboundState(): InboundState {
  return { toolCalls: new Map(), cancellable: cancellable() };
}

export { V2_STATUS_META_KEY } from './v2-updates.js';
/** The `_meta` key keeping a v2 diff (its changes and patch) shown to v1 as text. */
export const V2_DIFF_META_KEY = 'acp-warden/v2Diff';

/** `update` (from a v2 agent) as the journal's v1-shaped updates: none, one, or one per block of a whole message. */
export function updateFromV2(update: V2.SessionUpdate, state: InboundState): SessionUpdate[] {
  const kind = (update as { sessionUpdate: string }).sessionUpdate;
  noteCancellable(state.cancellable, update);
  switch (kind) {
    case 'user_message':
    case 'agent_message':
    case 'agent_thought': {
      const { messageId, content, _meta } = update as V2.UserMessage;
      const chunk = `${kind}_chunk` as 'user_message_chunk';
      return (content ?? []).map((block) => ({ sessionUpdate: chunk, messageId, content: block as ContentBlock, ...(_meta ? { _meta } : {}) }) as SessionUpdate);
    }
    case 'state_update':
      return [];
    case 'tool_call_update':
      return [toolCallFromV2(update as V2.ToolCallUpdate, state)];
    case 'tool_call_content_chunk': {
      const { toolCallId, content, _meta } = update as V2.ToolCallContentChunk;
      const known = state.toolCalls.get(toolCallId);
      const whole = [...(known ?? []), toolContentFromV2(content)];
      state.toolCalls.set(toolCallId, whole);
      if (!known) return [{ sessionUpdate: 'tool_call', toolCallId, title: toolCallId, content: whole, ...(_meta ? { _meta } : {}) }];
      return [{ sessionUpdate: 'tool_call_update', toolCallId, content: whole, ...(_meta ? { _meta } : {}) }];
    }
    case 'plan_update': {
      const { plan, _meta } = update as V2.PlanUpdate;
      const entries = plan.type === 'items' ? (plan as V2.PlanItems).entries : [];
      return [{ sessionUpdate: 'plan', entries, ...(_meta ? { _meta } : {}) } as SessionUpdate];
    }
    case 'available_commands_update': {
      const { availableCommands, ...rest } = update as V2.AvailableCommandsUpdate & { sessionUpdate: string };
      return [{ ...rest, availableCommands: availableCommands.flatMap(commandFromV2) } as SessionUpdate];
    }
    case 'config_option_update': {
      const { configOptions, ...rest } = update as V2.ConfigOptionUpdate & { sessionUpdate: string };
      return [{ ...rest, configOptions: configOptions.map(configOptionFromV2) } as SessionUpdate];
    }
    default:
      // The same in both (chunks, session info, usage, notices), or kinds v1 has not: kept as they came.
      return [update as unknown as SessionUpdate];
  }
}

/** A v2 tool call upsert as v1's create (first of its id) or update. */
function toolCallFromV2(update: V2.ToolCallUpdate, state: InboundState): SessionUpdate {
  const { toolCallId, name, title, kind, status, content, locations, rawInput, rawOutput, capabilities, _meta } = update;
  const known = state.toolCalls.has(toolCallId);
  const mapped = content === undefined || content === null ? undefined : content.map(toolContentFromV2);
  state.toolCalls.set(toolCallId, mapped ?? state.toolCalls.get(toolCallId) ?? []);
  const v1Status = status === 'cancelled' ? 'failed' : status === 'paused' ? 'in_progress' : status;
  // v1 has no tool call capabilities: kept in `_meta`, where v2-updates.ts finds them for a v2 client.
  const withCapabilities = capabilities === undefined ? _meta : { ...(_meta ?? {}), [V2_CAPABILITIES_META_KEY]: capabilities };
  const meta = status !== v1Status ? { ...(withCapabilities ?? {}), [V2_STATUS_META_KEY]: status } : withCapabilities;
  const fields = {
    toolCallId,
    ...(name === undefined ? {} : { name }),
    ...(kind === undefined ? {} : { kind }),
    ...(v1Status === undefined ? {} : { status: v1Status }),
    ...(content === undefined ? {} : { content: mapped ?? null }),
    ...(locations === undefined ? {} : { locations }),
    ...(rawInput === undefined ? {} : { rawInput }),
    ...(rawOutput === undefined ? {} : { rawOutput }),
    ...(meta ? { _meta: meta } : {}),
  };
  if (!known) return { sessionUpdate: 'tool_call', title: title ?? name ?? toolCallId, ...fields } as SessionUpdate;
  return { sessionUpdate: 'tool_call_update', ...(title === undefined ? {} : { title }), ...fields } as SessionUpdate;
}

/** A tool call's content as v1 can show it (see the module's comment). */
export function toolContentFromV2(content: V2.ToolCallContent): ToolCallContent {
  switch (content.type) {
    case 'diff': {
      const diff = content as V2.Diff & { type: 'diff' };
      const paths = diff.changes.map((change) => ('path' in change ? String(change.path) : 'from' in change ? `${String(change.from)} -> ${String(change.to)}` : '?'));
      const text = diff.patch ? `\`\`\`diff\n${diff.patch.text}\`\`\`` : `changed: ${paths.join(', ')}`;
      return { type: 'content', content: { type: 'text', text }, _meta: { ...(diff._meta ?? {}), [V2_DIFF_META_KEY]: { changes: diff.changes, patch: diff.patch ?? null } } };
    }
    case 'terminal': {
      const { terminalId } = content as V2.Terminal & { type: 'terminal' };
      return { type: 'content', content: { type: 'text', text: `(terminal ${terminalId}, run by the agent)` } };
    }
    default:
      return content as ToolCallContent;
  }
}

/** A v2 command as v1 lists it (a command type v1 has not is left out: v1 cannot run it). */
function commandFromV2(command: V2.AvailableCommand): AvailableCommand[] {
  if (command.type !== 'command') return [];
  const { type: _type, input, ...rest } = command as V2.Command & { type: 'command' };
  if (input === undefined || input === null) return [{ ...rest, ...(input === null ? { input: null } : {}) } as AvailableCommand];
  if (input.type !== 'text') return [rest as AvailableCommand];
  const { type: _inputType, ...hint } = input as V2.TextCommandInput & { type: 'text' };
  return [{ ...rest, input: hint } as AvailableCommand];
}

/** A v2 config option as v1 names it: `configId` is `id`. */
export function configOptionFromV2(option: V2.SessionConfigOption): SessionConfigOption {
  const { configId, ...rest } = option as V2.SessionConfigOption & { configId: string };
  return { ...rest, id: configId } as SessionConfigOption;
}

/**
 * How a v2 agent's turn ended, from its `state_update`: `undefined` while it works (`running`,
 * `requires_action`, a state of its own), else the stop reason a v1 prompt answer gives, or the
 * error that ended it (stop reason `error`; without an error object, an internal error saying so).
 */
export function turnEndFromV2(update: V2.SessionUpdate): TurnEnd | undefined {
  const state = update as { sessionUpdate: string; state?: string; stopReason?: string | null; error?: { code: number; message: string; data?: unknown } | null };
  if (state.sessionUpdate !== 'state_update' || state.state !== 'idle') return undefined;
  if (state.stopReason === 'error') {
    const error = state.error ?? { code: -32603, message: 'Internal error: the agent ended the turn with an error it did not describe' };
    return { kind: 'error', error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
  }
  // An idle snapshot without a stop reason ended the turn all the same (v2 only recommends one).
  return { kind: 'stop', stopReason: (state.stopReason ?? 'end_turn') as Extract<TurnEnd, { kind: 'stop' }>['stopReason'] };
}
