/**
 * A session's updates as an ACP v2 client reads them. The core journals and delivers v1-shaped
 * updates (version-neutral for warden: v1's shapes are the journal's); an edge that speaks v2
 * to its client maps each one here, on the way out, and nothing below it knows.
 *
 * What changes (ACP v2, `session/update`): message chunks carry a `messageId` (required), so
 * the edge says which message each chunk belongs to; a tool call is one upsert kind,
 * `tool_call_update` (v1's `tool_call` creates, v2 creates on the first update of an id);
 * a plan is `plan_update` with an id (v1 has one plan per session, replaced whole); a diff names
 * its changes and carries a git patch instead of the old and new text; a command is a typed
 * variant (`command`, its input `text`); a config option's id is `configId`; modes are gone (config
 * options carry them: `current_mode_update` is not shown to a v2 client, its agent's
 * `config_option_update` is). Kinds both versions share pass as they are; `_meta` passes.
 */
import type { AvailableCommand, SessionConfigOption, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { V2_CAPABILITIES_META_KEY } from './v2-cancellable.js';

/** The `_meta` key keeping a v2 tool call status v1 has no word for (written by v2-inbound.ts, which re-exports it). */
export const V2_STATUS_META_KEY = 'acp-warden/v2Status';

/** Which message a chunk belongs to, by its kind: the edge keeps one id per message it shows. */
export interface MessageIds {
  /** The user's message of the turn (the prompt's `messageId`). */
  readonly user: () => string;
  /** The agent's message under way. */
  readonly agent: () => string;
  /** The agent's thought under way. */
  readonly thought: () => string;
}

/** The id of the one plan a v1 session has (a v2 plan is replaced by id; v1 replaces the whole plan). */
export const SESSION_PLAN_ID = 'plan';

/**
 * `update` (v1-shaped, as journaled) as a v2 client reads it: none (a mode change), or one
 * update. Kinds neither version defines (warden's own, an agent's `_`-prefixed ones) pass as
 * they are: a v2 client ignores what it does not know.
 */
export function updateToV2(update: SessionUpdate, ids: MessageIds): V2.SessionUpdate[] {
  switch (update.sessionUpdate) {
    case 'user_message_chunk':
      return [chunkToV2(update, 'user_message_chunk', ids.user)];
    case 'agent_message_chunk':
      return [chunkToV2(update, 'agent_message_chunk', ids.agent)];
    case 'agent_thought_chunk':
      return [chunkToV2(update, 'agent_thought_chunk', ids.thought)];
    case 'tool_call':
    case 'tool_call_update': {
      const { sessionUpdate: _kind, content, _meta, ...fields } = update;
      return [{ ...fields, ...v2FieldsOf(_meta), ...(content === undefined ? {} : { content: content === null ? null : content.map(toolContentToV2) }), sessionUpdate: 'tool_call_update' } as V2.SessionUpdate];
    }
    case 'plan': {
      const { sessionUpdate: _kind, entries, _meta, ...rest } = update;
      return [{ ...rest, ...(_meta === undefined ? {} : { _meta }), sessionUpdate: 'plan_update', plan: { type: 'items', planId: SESSION_PLAN_ID, entries } } as V2.SessionUpdate];
    }
    case 'current_mode_update':
      return [];
    case 'config_option_update':
      return [{ ...update, configOptions: update.configOptions.map(configOptionToV2) } as V2.SessionUpdate];
    case 'available_commands_update':
      return [{ ...update, availableCommands: update.availableCommands.map(commandToV2) } as V2.SessionUpdate];
    default:
      // The same shape in both (commands, config options, session info, usage, notices, compaction), or not ACP's.
      return [update as unknown as V2.SessionUpdate];
  }
}

/**
 * A tool call's `_meta`, and what its v2 agent said that v1 has no place for (kept in `_meta` by
 * v2-inbound.ts): its `capabilities`, and its status when v1 has no word for it (`cancelled`,
 * `paused`), as v2 has them.
 */
function v2FieldsOf(meta: Record<string, unknown> | null | undefined): { _meta?: Record<string, unknown> | null; capabilities?: unknown; status?: unknown } {
  if (meta === undefined) return {};
  if (meta === null || !(V2_CAPABILITIES_META_KEY in meta || V2_STATUS_META_KEY in meta)) return { _meta: meta };
  const { [V2_CAPABILITIES_META_KEY]: capabilities, [V2_STATUS_META_KEY]: status, ...rest } = meta;
  return { ...(capabilities === undefined ? {} : { capabilities }), ...(status === undefined ? {} : { status }), ...(Object.keys(rest).length === 0 ? {} : { _meta: rest }) };
}

/** A command as v2 lists it: a typed variant (`command`), its input typed too (`text`, with its hint). */
function commandToV2(command: AvailableCommand): V2.AvailableCommand {
  const { input, ...rest } = command;
  return { type: 'command', ...rest, ...(input === undefined ? {} : { input: input === null ? null : { type: 'text', ...input } }) } as V2.AvailableCommand;
}

/** A config option as v2 names it: its id is `configId`. */
export function configOptionToV2(option: SessionConfigOption): V2.SessionConfigOption {
  const { id, ...rest } = option;
  return { ...rest, configId: id } as V2.SessionConfigOption;
}

type V1Chunk = Extract<SessionUpdate, { sessionUpdate: 'user_message_chunk' | 'agent_message_chunk' | 'agent_thought_chunk' }>;

/** A chunk with its message's id: the agent's own (v1 lets it name one) or the edge's. */
function chunkToV2(chunk: V1Chunk, kind: V1Chunk['sessionUpdate'], id: () => string): V2.SessionUpdate {
  const { messageId, ...rest } = chunk;
  return { ...rest, sessionUpdate: kind, messageId: typeof messageId === 'string' && messageId !== '' ? messageId : id() } as V2.SessionUpdate;
}

/** A tool call's content as v2 has it: a diff as its change and a git patch; the rest as it is. */
export function toolContentToV2(content: ToolCallContent): V2.ToolCallContent {
  if (content.type !== 'diff') return content as V2.ToolCallContent;
  const { path, oldText, newText, _meta } = content;
  const created = oldText === undefined || oldText === null;
  return {
    type: 'diff',
    changes: [{ operation: created ? 'add' : 'modify', path }],
    patch: { format: 'git_patch', text: gitPatchOf(path, created ? undefined : oldText, newText) },
    ...(_meta === undefined ? {} : { _meta }),
  } as V2.ToolCallContent;
}

/**
 * A git patch that replaces the file's whole text (one hunk: every old line removed, every new
 * line added; `undefined` old text: a new file). Whole, not minimal: v1 carries both texts, not
 * a diff, and a client renders either the same.
 */
export function gitPatchOf(path: string, oldText: string | undefined, newText: string): string {
  const relative = path.replace(/^\/+/u, '');
  const oldLines = oldText === undefined ? [] : linesOf(oldText);
  const newLines = linesOf(newText);
  const header = [`diff --git a/${relative} b/${relative}`];
  if (oldText === undefined) header.push('new file mode 100644', '--- /dev/null');
  else header.push(`--- a/${relative}`);
  header.push(`+++ b/${relative}`);
  if (oldLines.length === 0 && newLines.length === 0) return `${header.join('\n')}\n`;
  const hunk = `@@ -${rangeOf(oldLines.length)} +${rangeOf(newLines.length)} @@`;
  const body = [...oldLines.map((line) => `-${line.text}${line.end ? '' : '\n\\ No newline at end of file'}`), ...newLines.map((line) => `+${line.text}${line.end ? '' : '\n\\ No newline at end of file'}`)];
  return `${[...header, hunk, ...body].join('\n')}\n`;
}

/** A unified diff range: `start,count` (start 0 for an empty side, count omitted when 1). */
function rangeOf(count: number): string {
  if (count === 0) return '0,0';
  return count === 1 ? '1' : `1,${count}`;
}

/** The lines of a text, each with whether it ended with a newline. */
function linesOf(text: string): Array<{ readonly text: string; readonly end: boolean }> {
  if (text === '') return [];
  const parts = text.split('\n');
  const endsWithNewline = parts.at(-1) === '';
  if (endsWithNewline) parts.pop();
  return parts.map((line, index) => ({ text: line, end: index < parts.length - 1 || endsWithNewline }));
}
