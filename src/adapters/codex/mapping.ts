/**
 * Codex app-server ↔ ACP, as pure functions. The app-server speaks JSON-RPC over stdio
 * without a `"jsonrpc"` field; shapes follow the recorded transcripts in
 * `spec/fixtures/codex-app-server-*` (Codex 0.171.0).
 */
import type { ContentBlock, ListSessionsResponse, SessionInfo, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk';
import { RESUME_META_KEY } from '../../protocol/native-agent.js';
import type { TurnOutcome } from '../session-outcomes.js';
import { noToolRuns, type ToolRuns } from '../turn-activity.js';

/** A message Codex writes, loosely typed. */
export interface CodexMessage {
  readonly id?: number | string;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code?: number; readonly message?: string };
}

/** A request to Codex. */
export function codexRequest(id: number, method: string, params: unknown): Record<string, unknown> {
  return { id, method, params };
}

/** ACP prompt blocks → Codex `turn/start` input items. */
export function turnInput(prompt: readonly ContentBlock[]): unknown[] {
  const input: unknown[] = [];
  for (const block of prompt) {
    switch (block.type) {
      case 'text':
        input.push({ type: 'text', text: block.text, text_elements: [] });
        break;
      case 'image':
        if (block.uri && /^https?:/u.test(block.uri)) input.push({ type: 'image', url: block.uri });
        else input.push({ type: 'image', url: `data:${block.mimeType};base64,${block.data}` });
        break;
      case 'resource_link':
        input.push({ type: 'text', text: `[${block.name}](${block.uri})`, text_elements: [] });
        break;
      case 'resource': {
        const resource = block.resource as { uri: string; text?: string };
        const text = typeof resource.text === 'string' ? `<context ref="${resource.uri}">\n${resource.text}\n</context>` : `[${resource.uri}](${resource.uri})`;
        input.push({ type: 'text', text, text_elements: [] });
        break;
      }
      default:
        break;
    }
  }
  return input;
}

/** A shell command as people read it: `/bin/bash -lc '<cmd>'` shows `<cmd>`. */
export function commandTitle(command: unknown): string {
  if (typeof command !== 'string') return 'Run a command';
  // `/bin/bash -lc '<cmd>'`: show the command itself.
  const inner = /^\/bin\/(?:ba)?sh -lc '([\s\S]*)'$/u.exec(command);
  return `\`${inner ? inner[1] : command}\``;
}

/** A notification from Codex → the ACP updates it means (none for bookkeeping ones). */
export function updatesOfNotification(method: string, params: Record<string, unknown>): SessionUpdate[] {
  switch (method) {
    case 'item/agentMessage/delta':
      return typeof params.delta === 'string' && params.delta ? [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: params.delta } }] : [];
    case 'item/reasoning/textDelta':
    case 'item/reasoning/summaryTextDelta':
      return typeof params.delta === 'string' && params.delta ? [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: params.delta } }] : [];
    case 'item/started':
      return itemStarted(params.item as Record<string, unknown>);
    case 'item/completed':
      return itemCompleted(params.item as Record<string, unknown>);
    case 'turn/plan/updated': {
      const plan = params.plan as Array<{ step?: string; status?: string }> | undefined;
      if (!Array.isArray(plan)) return [];
      return [{
        sessionUpdate: 'plan',
        entries: plan.map((entry) => ({
          content: String(entry.step ?? ''),
          priority: 'medium',
          status: entry.status === 'completed' ? 'completed' : entry.status === 'inProgress' ? 'in_progress' : 'pending',
        })),
      }];
    }
    case 'thread/tokenUsage/updated': {
      const usage = params.tokenUsage as { total?: { totalTokens?: number }; modelContextWindow?: number } | undefined;
      if (typeof usage?.total?.totalTokens !== 'number') return [];
      return [{ sessionUpdate: 'usage_update', used: usage.total.totalTokens, size: usage.modelContextWindow ?? 258_400 } as SessionUpdate];
    }
    default:
      return [];
  }
}

function itemStarted(item: Record<string, unknown> | undefined): SessionUpdate[] {
  if (!item || typeof item.id !== 'string') return [];
  if (item.type === 'commandExecution') {
    return [{ sessionUpdate: 'tool_call', toolCallId: item.id, title: commandTitle(item.command), kind: 'execute', status: 'in_progress', rawInput: { command: item.command, cwd: item.cwd } }];
  }
  if (item.type === 'fileChange') {
    const changes = Array.isArray(item.changes) ? (item.changes as Array<{ path?: string }>) : [];
    const paths = changes.map((change) => change.path).filter((path): path is string => typeof path === 'string');
    return [{ sessionUpdate: 'tool_call', toolCallId: item.id, title: paths.length > 0 ? `Edit ${paths.join(', ')}` : 'Edit files', kind: 'edit', status: 'in_progress', locations: paths.map((path) => ({ path })), rawInput: { changes } }];
  }
  return [];
}

function itemCompleted(item: Record<string, unknown> | undefined): SessionUpdate[] {
  if (!item || typeof item.id !== 'string') return [];
  if (item.type === 'commandExecution') {
    const failed = item.status === 'failed' || item.status === 'declined' || (typeof item.exitCode === 'number' && item.exitCode !== 0);
    const output = typeof item.aggregatedOutput === 'string' ? item.aggregatedOutput : '';
    const content: ToolCallContent[] = output ? [{ type: 'content', content: { type: 'text', text: `\`\`\`\n${output}\n\`\`\`` } }] : [];
    return [{ sessionUpdate: 'tool_call_update', toolCallId: item.id, status: failed ? 'failed' : 'completed', ...(content.length > 0 ? { content } : {}), rawOutput: { exitCode: item.exitCode, output } }];
  }
  if (item.type === 'fileChange') {
    const changes = Array.isArray(item.changes) ? (item.changes as Array<{ path?: string; diff?: string; kind?: unknown }>) : [];
    const content: ToolCallContent[] = changes
      .filter((change) => typeof change.path === 'string' && typeof change.diff === 'string')
      .map((change) => ({ type: 'content', content: { type: 'text', text: `\`\`\`diff\n${change.diff}\n\`\`\`` } }));
    const failed = item.status === 'failed' || item.status === 'declined';
    return [{ sessionUpdate: 'tool_call_update', toolCallId: item.id, status: failed ? 'failed' : 'completed', ...(content.length > 0 ? { content } : {}) }];
  }
  return [];
}

/** `turn/completed` → the prompt's end. */
export function turnOutcome(params: Record<string, unknown>, cancelled: boolean): TurnOutcome {
  const turn = params.turn as { status?: string; error?: { message?: string } | null } | undefined;
  if (cancelled || turn?.status === 'interrupted') return { stopReason: 'cancelled' };
  if (turn?.status === 'failed') {
    return { error: { message: `Codex reported an error: ${errorMessageOf(turn.error?.message)}`, data: { status: turn.status } } };
  }
  return { stopReason: 'end_turn' };
}

/**
 * An approval request's decision for an ACP permission outcome, chosen among the decisions
 * Codex offered (`availableDecisions`): "always" prefers a session-wide or policy-amending
 * acceptance, a refusal is `decline` (the call is refused, the turn goes on), a cancelled
 * permission is `cancel` (the turn ends).
 */
export function decisionFor(outcome: { outcome?: string; optionId?: string } | undefined, available?: readonly unknown[]): unknown {
  const offered = (name: string) => !available || available.some((entry) => entry === name || (typeof entry === 'object' && entry !== null && name in entry));
  const pick = (...names: string[]) => {
    for (const name of names) {
      if (!offered(name)) continue;
      const object = available?.find((entry) => typeof entry === 'object' && entry !== null && name in entry);
      return object ?? name;
    }
    return names.at(-1);
  };
  if (outcome?.outcome !== 'selected') return pick('cancel');
  if (outcome.optionId === 'allow_always') return pick('acceptForSession', 'acceptWithExecpolicyAmendment', 'accept');
  if (outcome.optionId === 'allow') return pick('accept');
  // A refusal of one call is `decline` even when it is not offered (Codex 0.171.0 offers
  // only accept / amendment / cancel, yet takes decline): `cancel` would abort the turn.
  return 'decline';
}

/** Codex puts the raw error body in its messages: the `message` inside it, when there is one. */
export function errorMessageOf(raw: unknown): string {
  if (typeof raw !== 'string') return 'the turn failed';
  try {
    const parsed = JSON.parse(raw) as { error?: { message?: unknown }; message?: unknown };
    const message = parsed.error?.message ?? parsed.message;
    return typeof message === 'string' ? message : raw;
  } catch {
    return raw;
  }
}

// ---------------------------------------------------------------------------------------
// session/list ↔ thread/list (codex app-server generate-json-schema: v2/ThreadList*.json)

/** How many threads one `thread/list` asks for, unless the adapter is told otherwise. */
export const defaultThreadListLimit = 50;

/**
 * ACP `session/list` params → Codex `thread/list` params: `cwd` is Codex's exact-match cwd
 * filter, `cursor` is passed back as Codex made it, threads come most recently updated first
 * (the order of warden's journal). `sourceKinds` is left out, so Codex lists what its own
 * resume picker lists (interactive threads: the CLI's and app-servers', not `codex exec`).
 */
export function threadListParams(params: { readonly cwd?: unknown; readonly cursor?: unknown }, limit: number = defaultThreadListLimit): Record<string, unknown> {
  return {
    cursor: typeof params.cursor === 'string' ? params.cursor : null,
    limit,
    sortKey: 'updated_at',
    ...(typeof params.cwd === 'string' ? { cwd: params.cwd } : {}),
  };
}

/** A title from a thread's `name`, else its `preview` (its first user message): the first line, at most 80 characters. */
function threadTitle(name: unknown, preview: unknown): string | null {
  for (const candidate of [name, preview]) {
    if (typeof candidate !== 'string') continue;
    const line = candidate.trim().split('\n', 1)[0]?.trim();
    if (line) return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  }
  return null;
}

/**
 * One Codex thread (`Thread` of `thread/list`) → an ACP `SessionInfo`: the session id is the
 * thread id, `updatedAt` (Unix seconds) becomes ISO 8601, and `_meta` says which agent keeps
 * it and the resume state that continues it (`{ threadId }`, what the adapter reports for
 * the threads it starts). `undefined` for a thread without an id or a cwd.
 */
export function sessionInfoOfThread(thread: Record<string, unknown>): SessionInfo | undefined {
  if (typeof thread.id !== 'string' || thread.id.length === 0 || typeof thread.cwd !== 'string') return undefined;
  const updatedAt = typeof thread.updatedAt === 'number' && Number.isFinite(thread.updatedAt) ? new Date(thread.updatedAt * 1000).toISOString() : null;
  return {
    sessionId: thread.id,
    cwd: thread.cwd,
    title: threadTitle(thread.name, thread.preview),
    updatedAt,
    _meta: { 'acp-warden/agent': 'codex', [RESUME_META_KEY]: { threadId: thread.id } },
  };
}

/** A `thread/list` result (`{ data, nextCursor }`) → an ACP `session/list` result. */
export function sessionListOf(result: Record<string, unknown> | undefined): ListSessionsResponse {
  const data = Array.isArray(result?.data) ? (result.data as unknown[]) : [];
  const sessions = data
    .filter((thread): thread is Record<string, unknown> => typeof thread === 'object' && thread !== null)
    .map(sessionInfoOfThread)
    .filter((info): info is SessionInfo => info !== undefined);
  const nextCursor = result?.nextCursor;
  return { sessions, ...(typeof nextCursor === 'string' && nextCursor.length > 0 ? { nextCursor } : {}) };
}


/** The items that are tool runs: a command, a patch, an MCP tool call. Codex may be silent while one runs. */
const toolItemTypes: ReadonlySet<unknown> = new Set(['commandExecution', 'fileChange', 'mcpToolCall']);

/** The tool runs a Codex line starts (`item/started`) and ends (`item/completed`); other lines, and lines of the wrong shape, none. */
export function toolRunsOf(message: unknown): ToolRuns {
  const line = (typeof message === 'object' && message !== null ? message : {}) as { method?: unknown; params?: { item?: { id?: unknown; type?: unknown } } };
  const item = typeof line.params === 'object' && line.params !== null ? line.params.item : undefined;
  const id = typeof item === 'object' && item !== null && typeof item.id === 'string' && toolItemTypes.has(item.type) ? [item.id] : [];
  if (line.method === 'item/started') return { started: id, ended: [] };
  if (line.method === 'item/completed') return { started: [], ended: id };
  return noToolRuns;
}
