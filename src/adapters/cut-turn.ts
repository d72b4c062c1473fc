/**
 * The tool calls of the turn in flight as warden saw them (issue 32): what a continuation tells
 * the agent when its process died mid-turn. Warden's view, not the CLI's: Claude Code's
 * transcript lags its stdout by ~150 ms, and both CLIs mark every cut call the same ("outcome
 * unknown", "aborted"), never approved or not (docs/recovery.md, "Continuing a cut turn").
 * Pure reducers over the ACP updates and permission requests an adapter emits.
 */
import type { SessionAdapterOutput } from './adapter.js';

/**
 * Where one tool call stood: `asked` (a permission request unanswered: it never ran), `refused`
 * (the permission denied or cancelled), `started` (announced, approved or needing no approval,
 * not ended: it may have partly run), `completed` / `failed` (its result is known).
 */
export type CutToolState = 'asked' | 'refused' | 'started' | 'completed' | 'failed';

/** One tool call of the turn. */
export interface CutTool {
  readonly id: string;
  readonly title: string;
  readonly state: CutToolState;
  /** The permission request's key, while it is unanswered. */
  readonly askedAs?: string;
  /** The start of its result, once it ended. */
  readonly result?: string;
}

/** The tool calls of a turn, in the order they came. */
export type TurnTools = readonly CutTool[];

/** A turn with no tool call seen. */
export const noTurnTools: TurnTools = Object.freeze([]);

/** The longest result kept of a tool call (its start), in characters. */
const resultChars = 400;

function upsert(tools: TurnTools, id: string, change: (tool: CutTool | undefined) => CutTool): TurnTools {
  const at = tools.findIndex((tool) => tool.id === id);
  if (at < 0) return [...tools, change(undefined)];
  const next = change(tools[at]);
  return next === tools[at] ? tools : tools.map((tool, index) => (index === at ? next : tool));
}

/** The text of a tool call's content (ACP `content` blocks, or its raw output), cut to its start. */
function resultOf(update: Record<string, unknown>): string | undefined {
  const parts: string[] = [];
  for (const item of Array.isArray(update.content) ? (update.content as unknown[]) : []) {
    const block = (item as { content?: { type?: unknown; text?: unknown } }).content;
    if (block && typeof block.text === 'string') parts.push(block.text);
  }
  if (parts.length === 0 && update.rawOutput !== undefined) parts.push(typeof update.rawOutput === 'string' ? update.rawOutput : JSON.stringify(update.rawOutput));
  if (parts.length === 0) return undefined;
  // On one line, without the code fences the adapters wrap a command's output in.
  const text = parts
    .map((part) => part.replace(/^\s*```[^\n]*\n?|\n?```\s*$/gu, ''))
    .join(' ')
    .replace(/\s+/gu, ' ')
    .trim();
  return text.length > resultChars ? `${text.slice(0, resultChars)}…` : text;
}

/** After one of the adapter's outputs: a `tool_call`, a `tool_call_update`, a permission request. Unchanged (the same object) otherwise. */
export function toolsAfterOutput(tools: TurnTools, output: SessionAdapterOutput): TurnTools {
  if (output.type === 'acp.clientRequest' && output.method === 'session/request_permission') {
    const call = ((output.params as { toolCall?: { toolCallId?: unknown; title?: unknown } }).toolCall ?? {}) as { toolCallId?: unknown; title?: unknown };
    const id = typeof call.toolCallId === 'string' ? call.toolCallId : output.key;
    return upsert(tools, id, (tool) => ({ id, title: tool?.title ?? (typeof call.title === 'string' ? call.title : 'a tool call'), state: 'asked', askedAs: output.key }));
  }
  if (output.type !== 'acp.update') return tools;
  const update = output.update as unknown as Record<string, unknown>;
  if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') return tools;
  const id = update.toolCallId;
  if (typeof id !== 'string') return tools;
  const status = update.status;
  const ended = status === 'completed' || status === 'failed';
  return upsert(tools, id, (tool) => {
    const title = typeof update.title === 'string' && update.title !== '' ? update.title : tool?.title ?? 'a tool call';
    if (ended) {
      const result = resultOf(update) ?? tool?.result;
      return { id, title, state: status, ...(result !== undefined ? { result } : {}) };
    }
    // Asked and not answered yet: still asked (an update of its title changes nothing of that).
    const state: CutToolState = tool?.state ?? 'started';
    return tool && tool.title === title && tool.state === state ? tool : { ...tool, id, title, state };
  });
}

/** After the editor's answer to permission request `key`: approved (it may run) or refused (it did not). */
export function toolsAfterAnswer(tools: TurnTools, key: string, answer: unknown, failed: boolean): TurnTools {
  const tool = tools.find((entry) => entry.askedAs === key);
  if (!tool) return tools;
  const outcome = failed ? undefined : (answer as { outcome?: { outcome?: unknown; optionId?: unknown } } | undefined)?.outcome;
  const approved = outcome?.outcome === 'selected' && typeof outcome.optionId === 'string' && !/^(reject|deny|decline)/u.test(outcome.optionId);
  const { askedAs: _answered, ...rest } = tool;
  return upsert(tools, tool.id, () => ({ ...rest, state: approved ? (tool.state === 'asked' ? 'started' : tool.state) : 'refused' }));
}
