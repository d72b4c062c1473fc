/**
 * Claude Code's stream-json ↔ ACP, as pure functions. The adapter machine (`adapter.ts`)
 * decides when; these decide what. Shapes follow the recorded transcripts in
 * `spec/fixtures/claude-stream-json-*` (Claude Code 2.1.332).
 */
import type { ContentBlock, PlanEntry, SessionConfigOption, SessionUpdate, ToolCallContent, ToolKind } from '@agentclientprotocol/sdk';
import { leadingMembers } from '../../jsonrpc/envelope-scan.js';
import type { TurnOutcome } from '../session-outcomes.js';
import { noToolRuns, type ToolRuns } from '../turn-activity.js';

/** A line Claude Code writes, loosely typed: only the fields the mapping reads. */
export interface ClaudeMessage {
  readonly type: string;
  readonly subtype?: string;
  readonly session_id?: string;
  readonly [key: string]: unknown;
}

/** What the mapping remembers within one turn, to avoid duplicates. */
export interface TurnMemory {
  /** Assistant message ids whose text was streamed as deltas (their full text is not repeated). */
  readonly streamedText: ReadonlySet<string>;
  readonly streamedThinking: ReadonlySet<string>;
  /** Tool calls already announced. */
  readonly announcedTools: ReadonlySet<string>;
}

export const emptyTurn: TurnMemory = { streamedText: new Set(), streamedThinking: new Set(), announcedTools: new Set() };

/** A CLI value used as text: strings only (a CLI line of the wrong type must not reach the editor as an invalid update). */
function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A CLI value used as an object (a tool's input): plain objects only. */
function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A CLI value used as a token count or an amount: finite and not negative, or nothing. */
function amount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function withAdded(set: ReadonlySet<string>, value: string): ReadonlySet<string> {
  const next = new Set(set);
  next.add(value);
  return next;
}

/** ACP tool kinds of Claude Code's tools. */
export function toolKind(name: string): ToolKind {
  switch (name) {
    case 'Read':
    case 'NotebookRead':
      return 'read';
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
    case 'NotebookEdit':
      return 'edit';
    case 'Bash':
    case 'BashOutput':
    case 'KillShell':
      return 'execute';
    case 'Grep':
    case 'Glob':
    case 'LS':
      return 'search';
    case 'WebFetch':
    case 'WebSearch':
      return 'fetch';
    case 'TodoWrite':
    case 'Task':
      return 'think';
    case 'ExitPlanMode':
    case 'EnterPlanMode':
      return 'switch_mode';
    default:
      return 'other';
  }
}

/** A short title for a tool call, as editors show it. */
export function toolTitle(name: string, input: Record<string, unknown>): string {
  const path = (input.file_path ?? input.path ?? input.notebook_path) as string | undefined;
  switch (name) {
    case 'Bash':
      return typeof input.command === 'string' ? `\`${input.command}\`` : 'Bash';
    case 'Read':
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
      return path ? `${name} ${path}` : name;
    case 'Grep':
    case 'Glob':
      return typeof input.pattern === 'string' ? `${name} ${input.pattern}` : name;
    case 'WebFetch':
      return typeof input.url === 'string' ? `Fetch ${input.url}` : name;
    default:
      return name;
  }
}

function locations(input: Record<string, unknown>): Array<{ path: string }> | undefined {
  const path = (input.file_path ?? input.notebook_path) as string | undefined;
  return typeof path === 'string' ? [{ path }] : undefined;
}

/** A `plan` update from TodoWrite's input (the complete list, as ACP wants). */
export function planFromTodos(input: Record<string, unknown>): SessionUpdate | undefined {
  const todos = input.todos;
  if (!Array.isArray(todos)) return undefined;
  const entries: PlanEntry[] = todos.map((todo: { content?: unknown; status?: unknown; priority?: unknown }) => ({
    content: String(todo.content ?? ''),
    status: todo.status === 'completed' || todo.status === 'in_progress' ? todo.status : 'pending',
    priority: todo.priority === 'high' || todo.priority === 'low' ? todo.priority : 'medium',
  }));
  return { sessionUpdate: 'plan', entries };
}

/** ACP prompt blocks → the content of a stream-json `user` message. */
export function userContent(prompt: readonly ContentBlock[]): unknown[] {
  const content: unknown[] = [];
  for (const block of prompt) {
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: block.text });
        break;
      case 'image':
        content.push(block.uri && /^https?:/u.test(block.uri)
          ? { type: 'image', source: { type: 'url', url: block.uri } }
          : { type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } });
        break;
      case 'resource_link':
        content.push({ type: 'text', text: `[${block.name}](${block.uri})` });
        break;
      case 'resource': {
        const resource = block.resource as { uri: string; text?: string };
        content.push({ type: 'text', text: `[${resource.uri}](${resource.uri})` });
        if (typeof resource.text === 'string') content.push({ type: 'text', text: `<context ref="${resource.uri}">\n${resource.text}\n</context>` });
        break;
      }
      default:
        break; // audio: Claude Code takes none; the capability is not advertised
    }
  }
  return content;
}

/** The `user` line that sends a prompt. */
export function userMessage(prompt: readonly ContentBlock[], sessionId: string | undefined): Record<string, unknown> {
  return { type: 'user', message: { role: 'user', content: userContent(prompt) }, parent_tool_use_id: null, session_id: sessionId ?? '' };
}

/** A control request line (`initialize`, `interrupt`, `set_permission_mode`, `set_model`). */
export function controlRequest(requestId: string, request: Record<string, unknown>): Record<string, unknown> {
  return { type: 'control_request', request_id: requestId, request };
}

/** The answer to a `can_use_tool` control request. */
export function permissionAnswer(requestId: string, allow: boolean, input: unknown): Record<string, unknown> {
  return {
    type: 'control_response',
    response: {
      subtype: 'success',
      request_id: requestId,
      response: allow ? { behavior: 'allow', updatedInput: input } : { behavior: 'deny', message: 'The user refused this tool call.' },
    },
  };
}

/** The tool call of a `can_use_tool` control request, as the ACP permission request shows it. */
export function permissionToolCall(request: Record<string, unknown>, requestId: string): { toolCallId: string; title: string; status: 'pending'; rawInput: Record<string, unknown> } {
  const name = stringOf(request.tool_name) ?? 'tool';
  const description = stringOf(request.description);
  return { toolCallId: stringOf(request.tool_use_id) ?? requestId, title: description ? `${name} ${description}` : name, status: 'pending', rawInput: objectOf(request.input) };
}

/** What a streamed or complete assistant message means for the editor. */
export function updatesOf(message: ClaudeMessage, memory: TurnMemory): { updates: SessionUpdate[]; memory: TurnMemory } {
  const updates: SessionUpdate[] = [];
  let next = memory;
  if (message.type === 'stream_event') {
    const event = (message.event ?? {}) as { type?: string; delta?: { type?: string; text?: unknown; thinking?: unknown }; content_block?: { type?: string; id?: unknown; name?: unknown } };
    const messageId = String(message.api_message_id ?? '');
    const delta = stringOf(event.delta?.text);
    const thinking = stringOf(event.delta?.thinking);
    const id = stringOf(event.content_block?.id);
    if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta' && delta) {
      updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: delta } });
      next = { ...next, streamedText: withAdded(next.streamedText, messageId) };
    } else if (event.type === 'content_block_delta' && event.delta?.type === 'thinking_delta' && thinking) {
      updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: thinking } });
      next = { ...next, streamedThinking: withAdded(next.streamedThinking, messageId) };
    } else if (event.type === 'content_block_start' && event.content_block?.type === 'tool_use' && id) {
      const name = stringOf(event.content_block.name) ?? 'tool';
      updates.push({ sessionUpdate: 'tool_call', toolCallId: id, title: name, kind: toolKind(name), status: 'pending', rawInput: {} });
      next = { ...next, announcedTools: withAdded(next.announcedTools, id) };
    }
    return { updates, memory: next };
  }
  if (message.type === 'assistant') {
    const body = message.message as { id?: string; model?: string; content?: Array<Record<string, unknown>> };
    const messageId = String(body?.id ?? '');
    for (const block of body?.content ?? []) {
      if (block.type === 'text' && typeof block.text === 'string' && !next.streamedText.has(messageId)) {
        updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: block.text } });
      } else if (block.type === 'thinking' && typeof block.thinking === 'string' && !next.streamedThinking.has(messageId)) {
        updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: block.thinking } });
      } else if (block.type === 'tool_use' && typeof block.id === 'string') {
        const name = stringOf(block.name) ?? 'tool';
        const input = objectOf(block.input);
        const where = locations(input);
        if (!next.announcedTools.has(block.id)) {
          updates.push({ sessionUpdate: 'tool_call', toolCallId: block.id, title: toolTitle(name, input), kind: toolKind(name), status: 'pending', rawInput: input, ...(where ? { locations: where } : {}) });
          next = { ...next, announcedTools: withAdded(next.announcedTools, block.id) };
        } else {
          // The input is complete now: the title can say what the call does.
          updates.push({ sessionUpdate: 'tool_call_update', toolCallId: block.id, title: toolTitle(name, input), rawInput: input, ...(where ? { locations: where } : {}) });
        }
        if (name === 'TodoWrite') {
          const plan = planFromTodos(input);
          if (plan) updates.push(plan);
        }
      }
    }
    return { updates, memory: next };
  }
  if (message.type === 'user') {
    const body = message.message as { content?: unknown };
    const content = Array.isArray(body?.content) ? (body.content as Array<Record<string, unknown>>) : [];
    for (const block of content) {
      if (block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') continue;
      updates.push(toolResult(block, message.tool_use_result));
    }
    return { updates, memory: next };
  }
  return { updates, memory: next };
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return '';
}

/**
 * The images of a tool result (its Read tool on a PNG: `{ type: 'image', source: { type:
 * 'base64', media_type, data } }` blocks), as ACP image content.
 */
function resultImages(content: unknown): ToolCallContent[] {
  if (!Array.isArray(content)) return [];
  const images: ToolCallContent[] = [];
  for (const part of content as unknown[]) {
    const block = objectOf(part);
    const source = objectOf(block.source);
    if (block.type !== 'image' || source.type !== 'base64') continue;
    const data = stringOf(source.data);
    const mimeType = stringOf(source.media_type);
    if (data && mimeType) images.push({ type: 'content', content: { type: 'image', data, mimeType } });
  }
  return images;
}

/**
 * The tool's own result, as `rawOutput`: an image's base64 is already in the content, so it
 * is not repeated here (an update line would carry the screenshot twice).
 */
function rawToolOutput(toolUseResult: unknown, hasImages: boolean): unknown {
  const detail = objectOf(toolUseResult);
  if (!hasImages || detail.type !== 'image') return toolUseResult;
  const { base64: _omitted, ...file } = objectOf(detail.file);
  return { ...detail, file };
}

/** A `tool_result` → `tool_call_update` completed or failed, with a diff for file writes. */
export function toolResult(block: Record<string, unknown>, toolUseResult: unknown): SessionUpdate {
  const failed = block.is_error === true;
  const text = resultText(block.content);
  const images = resultImages(block.content);
  const content: ToolCallContent[] = [];
  const detail = toolUseResult as { type?: string; filePath?: string; content?: string; originalFile?: unknown; stdout?: string; stderr?: unknown } | undefined;
  if (!failed && detail && (detail.type === 'create' || detail.type === 'update') && typeof detail.filePath === 'string' && typeof detail.content === 'string') {
    content.push({ type: 'diff', path: detail.filePath, oldText: stringOf(detail.originalFile) ?? null, newText: detail.content });
  } else if (!failed && detail && typeof detail.stdout === 'string') {
    // Shell output, shown as a terminal would show it.
    const stderr = stringOf(detail.stderr);
    const output = stderr ? `${detail.stdout}\n${stderr}` : detail.stdout;
    content.push({ type: 'content', content: { type: 'text', text: `\`\`\`\n${output}\n\`\`\`` } });
  } else if (text) {
    content.push({ type: 'content', content: { type: 'text', text } });
  }
  content.push(...images);
  const rawOutput = toolUseResult === undefined ? text : rawToolOutput(toolUseResult, images.length > 0);
  return { sessionUpdate: 'tool_call_update', toolCallId: block.tool_use_id as string, status: failed ? 'failed' : 'completed', ...(content.length > 0 ? { content } : {}), rawOutput };
}

/**
 * What a line Claude Code printed was, from its first bytes, when it was over the line limit
 * and skipped unread: its `result` (the turn is over), a `user` line with a tool's result
 * (`toolUseId`: the call whose output was lost), or anything else (an assistant line whose
 * text was streamed already, ...). Claude Code writes `type` first.
 */
export type SkippedLine =
  /** `result`: what its head told (`subtype`, `is_error`, `stop_reason`, ...: written before the long `result` text). */
  | { readonly kind: 'result'; readonly result: ClaudeMessage }
  | { readonly kind: 'toolResult'; readonly toolUseId: string }
  | { readonly kind: 'other' };

/**
 * Reads a {@link SkippedLine} from the head of a skipped line. Claude Code 2.1.332 writes a
 * `result` line's `type` near its end, after the `result` text (spec/fixtures), so a result
 * is also known by the members only it has (`num_turns` and `result`) before that text.
 */
export function skippedLineOf(head: string): SkippedLine {
  const { keys, scalars } = leadingMembers(head);
  const type = scalars.type;
  if (type === 'result' || (type === undefined && keys.has('num_turns') && keys.has('result'))) {
    return { kind: 'result', result: { ...scalars, type: 'result' } as ClaudeMessage };
  }
  const toolUseId = type === 'user' ? /"tool_use_id"\s*:\s*"([^"\\]{1,200})"/u.exec(head)?.[1] : undefined;
  return toolUseId ? { kind: 'toolResult', toolUseId } : { kind: 'other' };
}

/** The `tool_call_update` for a tool whose result line was too long to read: completed, saying why its output is missing. */
export function unreadToolResult(toolUseId: string, bytes: number, limit: number): SessionUpdate {
  const text = `(The output of this tool, a line of ${bytes} bytes, is over acp-warden's limit of ${limit} bytes per line and was not read; warden acp --max-line-mib raises the limit.)`;
  return { sessionUpdate: 'tool_call_update', toolCallId: toolUseId, status: 'completed', content: [{ type: 'content', content: { type: 'text', text } }] };
}

/** The prompt's end from a `result` line; `undefined` with `error` when the turn failed. */
export function stopReasonOf(result: ClaudeMessage, cancelled: boolean): TurnOutcome {
  if (cancelled) return { stopReason: 'cancelled' };
  if (result.subtype === 'error_max_turns') return { stopReason: 'max_turn_requests' };
  if (result.is_error === true) {
    return {
      error: {
        message: `Claude Code reported an error: ${String(result.result ?? result.subtype ?? 'unknown')}`,
        data: { terminalReason: result.terminal_reason, apiErrorStatus: result.api_error_status, apiErrorType: result.api_error_type },
      },
    };
  }
  if (result.subtype === 'error_during_execution') return { stopReason: 'cancelled' };
  switch (result.stop_reason) {
    case 'max_tokens':
      return { stopReason: 'max_tokens' };
    case 'refusal':
      return { stopReason: 'refusal' };
    default:
      return { stopReason: 'end_turn' };
  }
}

/** A `usage_update` from a `result` line: tokens of the last model used, and the cost. */
export function usageOf(result: ClaudeMessage): SessionUpdate | undefined {
  const models = typeof result.modelUsage === 'object' && result.modelUsage !== null ? (result.modelUsage as Record<string, unknown>) : {};
  const model = Object.values(models).at(-1) as Record<string, unknown> | undefined;
  if (typeof model !== 'object' || model === null) return undefined;
  // Counts of the wrong type or out of range count as nothing, so the update stays valid ACP.
  const used = ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens'].reduce((sum, key) => sum + Math.round(amount(model[key]) ?? 0), 0);
  if (!Number.isSafeInteger(used)) return undefined;
  const window = amount(model.contextWindow);
  const size = window !== undefined && window > 0 && Number.isSafeInteger(Math.round(window)) ? Math.round(window) : 200_000;
  const spent = amount(result.total_cost_usd);
  const cost = spent !== undefined ? { cost: { amount: spent, currency: 'USD' } } : {};
  return { sessionUpdate: 'usage_update', used, size, ...cost } as SessionUpdate;
}

/**
 * Claude Code's permission modes as ACP session modes. `bypassPermissions` is not offered:
 * the CLI refuses it unless launched with `--dangerously-skip-permissions`, which it
 * refuses in turn when running as root (recorded with Claude Code 2.1.332).
 */
export const claudeModes = [
  { id: 'default', name: 'Default', description: 'Ask before edits and commands' },
  { id: 'acceptEdits', name: 'Accept edits', description: 'Edit files without asking' },
  { id: 'plan', name: 'Plan', description: 'Plan only: no edits, no commands' },
];

/** The `initialize` control response → ACP modes, config options (the model) and commands. */
export function sessionSetupOf(init: Record<string, unknown>, currentModel: string | undefined): {
  modes: { currentModeId: string; availableModes: typeof claudeModes };
  configOptions: SessionConfigOption[];
  commands: Array<{ name: string; description: string; input?: { hint: string } }>;
} {
  const models = Array.isArray(init.models) ? (init.models as Array<{ value?: string; displayName?: string; description?: string }>) : [];
  const options = models.filter((model) => typeof model?.value === 'string').map((model) => ({
    value: model.value as string,
    name: stringOf(model.displayName) ?? (model.value as string),
    ...(stringOf(model.description) ? { description: model.description } : {}),
  }));
  const current = currentModel ?? options[0]?.value ?? 'default';
  const configOptions: SessionConfigOption[] = options.length > 0
    ? [{ id: 'model', name: 'Model', category: 'model', type: 'select', currentValue: current, options }]
    : [];
  const commands = Array.isArray(init.commands)
    ? (init.commands as Array<{ name?: string; description?: string; argumentHint?: string }>)
        .filter((command) => typeof command?.name === 'string')
        .map((command) => ({ name: command.name as string, description: stringOf(command.description) ?? '', ...(stringOf(command.argumentHint) ? { input: { hint: command.argumentHint as string } } : {}) }))
    : [];
  const mode = typeof init.current_permission_mode === 'string' && claudeModes.some((entry) => entry.id === init.current_permission_mode) ? init.current_permission_mode : 'default';
  return { modes: { currentModeId: mode, availableModes: claudeModes }, configOptions, commands };
}

/**
 * The tool calls a line starts and ends: an `assistant` message's `tool_use` blocks start
 * (Claude Code runs the tool once the block is complete; it prints nothing while it runs),
 * a `user` message's `tool_result` blocks end. Other lines, and lines of the wrong shape, none.
 */
export function toolRunsOf(message: unknown): ToolRuns {
  const line = objectOf(message);
  const content = objectOf(line.message).content;
  const blocks = Array.isArray(content) ? content.map(objectOf) : [];
  if (line.type === 'assistant') return { started: blocks.flatMap((block) => (block.type === 'tool_use' && typeof block.id === 'string' ? [block.id] : [])), ended: [] };
  if (line.type === 'user') return { started: [], ended: blocks.flatMap((block) => (block.type === 'tool_result' && typeof block.tool_use_id === 'string' ? [block.tool_use_id] : [])) };
  return noToolRuns;
}
