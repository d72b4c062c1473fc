/**
 * A fake Anthropic Messages API on 127.0.0.1, for running the real `claude` CLI in tests
 * (spec/e2e/real-agents.spec.ts). It follows the contract recorded with Claude Code 2.1.332
 * (../shared/fixtures/README.md, section 1): `POST /v1/messages[?beta=true]` always answered
 * as an SSE stream (message_start, content blocks, message_delta, message_stop),
 * `POST /v1/messages/count_tokens` → `{"input_tokens":42}`, errors as HTTP 400 with an
 * Anthropic error body.
 *
 * The answer depends on the text of the last `role:"user"` message (Claude Code appends a
 * `role:"system"` message after it, and may put `<system-reminder>` text blocks in it):
 * - after a tool result: `Tool finished: <first 60 chars of the result>`;
 * - `TOOL:sh <cmd>`: a `Bash` call running `<cmd>`; `TOOL:bash`: `Bash` `echo hi`;
 * - `TOOL:read <path>`: `Read`; `TOOL:write <path>`: `Write` of `"hello\n"` (the tool name is
 *   the advertised one: `Write`, or `mcp__acp__Write` when that is all the request offers);
 * - `TOOL:agent <prompt>`: a subagent, Claude Code's `Agent` tool (`Task` when that is what the
 *   request offers) with `prompt`; the child's own request then gets its answer by these rules;
 * - `permission`: like `TOOL:write <cwd>/new.txt` (a new file: Claude asks permission), the
 *   cwd being the one Claude Code states in its system prompt;
 * - `SLOW` or `slow`: a long text, one word every 400 ms (for cancel, interrupt and kill);
 * - `ERROR400`: HTTP 400;
 * - `RATE429 N` (`OVERLOAD529 N`): the first N requests whose prompt it is get HTTP 429
 *   `rate_limit_error` (529 `overloaded_error`) with `retry-after: 1`, the next ones the hello
 *   answer; `N` of `always`: every one;
 * - anything else: `Hello from the fake Anthropic server.` in 2 deltas.
 *
 * Only node:http. Bounded: the server closes itself after `idleMs` without a request in
 * flight (10 minutes by default), and `close()` ends every connection at once.
 */
import type { ServerResponse } from 'node:http';
import { json, modelOptions, slowText, sseAnswer, startLocalModelServer, type FakeModelOptions, type FakeModelServer, type RecordedRequest, type ServerTools } from './local-model-server.js';

export type { FakeModelServer, RecordedRequest } from './local-model-server.js';

/** Options of {@link startFakeAnthropic}. */
export type FakeAnthropicOptions = FakeModelOptions;

type Block = Record<string, unknown> & { type?: string };

interface Reply {
  readonly kind: string;
  readonly text?: string;
  readonly tool?: { readonly name: string; readonly input: Record<string, unknown> };
  readonly slow?: boolean;
  readonly error?: string;
  /** HTTP status of a refusal: 429 rate limited, 529 overloaded. */
  readonly refusal?: 429 | 529;
}

/** Starts the fake Anthropic server on an ephemeral port of 127.0.0.1. */
export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeModelServer> {
  const { idleMs, wordIntervalMs, slowWords } = modelOptions(options);
  let counter = 0;
  /** How many requests each `RATE429 N` / `OVERLOAD529 N` prompt was refused so far. */
  const refused = new Map<string, number>();

  async function handle(recorded: RecordedRequest, response: ServerResponse, tools: ServerTools): Promise<void> {
    const { method, path, body } = recorded;

    if (method === 'POST' && path === '/v1/messages/count_tokens') {
      recorded.reply = 'count_tokens';
      json(response, 200, { input_tokens: 42 });
      return;
    }
    if (method !== 'POST' || path !== '/v1/messages') {
      recorded.reply = 'not_found';
      json(response, 404, { type: 'error', error: { type: 'not_found_error', message: `fake Anthropic server: no ${method} ${path}` } });
      return;
    }
    const params = (body ?? {}) as { model?: string; messages?: Array<{ role?: string; content?: unknown }>; tools?: Array<{ name?: string }>; system?: unknown; stream?: boolean };
    let reply = choose(params);
    if (reply.refusal) {
      const times = refused.get(reply.kind) ?? 0;
      const limit = reply.text === 'always' ? Infinity : Number(reply.text);
      if (times < limit) {
        refused.set(reply.kind, times + 1);
        recorded.reply = `${reply.refusal}`;
        const error = reply.refusal === 429 ? { type: 'rate_limit_error', message: 'fake Anthropic server: rate limited' } : { type: 'overloaded_error', message: 'fake Anthropic server: overloaded' };
        json(response, reply.refusal, { type: 'error', error }, { 'retry-after': '1' });
        return;
      }
      reply = { kind: 'text', text: 'Hello from the fake Anthropic server.' };
    }
    recorded.reply = reply.kind;
    if (reply.error) {
      json(response, 400, { type: 'error', error: { type: 'invalid_request_error', message: reply.error } });
      return;
    }
    counter += 1;
    const id = `msg_fake_${counter}`;
    const model = params.model ?? 'claude-fake';
    if (params.stream === false) {
      json(response, 200, messageOf(id, model, reply, slowText(slowWords)), { 'request-id': `req_fake_${counter}` });
      return;
    }
    const write = sseAnswer(response, { 'request-id': `req_fake_${counter}` });
    const send = (type: string, data: Record<string, unknown>) => write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('message_start', {
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
    });
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    send('ping', {});
    if (reply.slow) {
      const finished = await tools.streamSlowly(response, slowText(slowWords), (word) => send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: word } }));
      if (!finished) return;
    } else {
      const text = reply.text ?? '';
      const half = Math.ceil(text.length / 2);
      for (const part of [text.slice(0, half), text.slice(half)]) if (part) send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: part } });
    }
    send('content_block_stop', { index: 0 });
    if (reply.tool) {
      const toolId = `toolu_fake_${counter}`;
      send('content_block_start', { index: 1, content_block: { type: 'tool_use', id: toolId, name: reply.tool.name, input: {} } });
      const input = JSON.stringify(reply.tool.input);
      const cut = Math.ceil(input.length / 2);
      for (const part of [input.slice(0, cut), input.slice(cut)]) if (part) send('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: part } });
      send('content_block_stop', { index: 1 });
    }
    send('message_delta', { delta: { stop_reason: reply.tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } });
    send('message_stop', {});
    response.end();
  }

  return startLocalModelServer({ idleMs, wordIntervalMs, handle, internalError: (error) => ({ type: 'error', error: { type: 'api_error', message: String(error) } }) });
}

function blocksOf(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

function textOfResult(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return (content as Block[]).map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
  return '';
}

/** The working directory Claude Code states in its system prompt (or environment message). */
function cwdOf(params: { system?: unknown; messages?: Array<{ content?: unknown }> }): string | undefined {
  const texts: string[] = [];
  for (const block of blocksOf(params.system)) if (typeof block.text === 'string') texts.push(block.text);
  for (const message of params.messages ?? []) for (const block of blocksOf(message.content)) if (typeof block.text === 'string') texts.push(block.text);
  for (const pattern of [/Primary working directory:\s*(\/\S*)/u, /Working directory:\s*(\/\S*)/u]) {
    for (const text of texts) {
      const match = pattern.exec(text);
      if (match) return match[1];
    }
  }
  return undefined;
}

/** The advertised name of a file tool: `Write`, or `mcp__acp__Write` when only that is offered. */
function toolName(tools: Array<{ name?: string }> | undefined, name: string): string {
  const names = new Set((tools ?? []).map((tool) => tool.name));
  if (names.has(name)) return name;
  if (names.has(`mcp__acp__${name}`)) return `mcp__acp__${name}`;
  return name;
}

function choose(params: { messages?: Array<{ role?: string; content?: unknown }>; tools?: Array<{ name?: string }>; system?: unknown }): Reply {
  const messages = params.messages ?? [];
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const blocks = blocksOf(lastUser?.content);
  const results = blocks.filter((block) => block.type === 'tool_result');
  if (results.length > 0) {
    const result = textOfResult((results.at(-1) as Block).content);
    return { kind: 'text', text: `Tool finished: ${result.slice(0, 60)}` };
  }
  const texts = blocks
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => (block.text as string).trim())
    .filter((text) => text && !text.startsWith('<system-reminder>'));
  const prompt = texts.at(-1) ?? '';
  let match: RegExpExecArray | null;
  if ((match = /^TOOL:sh\s+([\s\S]+)$/u.exec(prompt))) {
    return { kind: 'tool:Bash', text: 'Running Bash.', tool: { name: 'Bash', input: { command: match[1], description: 'Run command' } } };
  }
  if (/^TOOL:bash$/u.test(prompt)) {
    return { kind: 'tool:Bash', text: 'Running Bash.', tool: { name: 'Bash', input: { command: 'echo hi', description: 'Print hi' } } };
  }
  if ((match = /^TOOL:read\s+(.+)$/u.exec(prompt))) {
    const name = toolName(params.tools, 'Read');
    return { kind: `tool:${name}`, text: 'Reading the file.', tool: { name, input: { file_path: match[1] } } };
  }
  const writeTo = (match = /^TOOL:write\s+(.+)$/u.exec(prompt)) ? match[1] : /^permission$/iu.test(prompt) ? `${cwdOf(params) ?? '/tmp'}/new.txt` : undefined;
  if (writeTo) {
    const name = toolName(params.tools, 'Write');
    return { kind: `tool:${name}`, text: 'Writing the file.', tool: { name, input: { file_path: writeTo, content: 'hello\n' } } };
  }
  if ((match = /^TOOL:agent\s+([\s\S]+)$/u.exec(prompt))) {
    // A subagent: Claude Code's subagent tool (`Agent`, formerly `Task`), whose child then asks for its own turn with `prompt` as its user text.
    const names = new Set((params.tools ?? []).map((tool) => tool.name));
    const name = names.has('Agent') ? 'Agent' : names.has('Task') ? 'Task' : 'Agent';
    return { kind: `tool:${name}`, text: 'Starting a subagent.', tool: { name, input: { description: 'Explore the files', prompt: match[1], subagent_type: 'general-purpose' } } };
  }
  if (/^slow$/iu.test(prompt)) return { kind: 'slow', slow: true };
  if (prompt === 'ERROR400') return { kind: 'error400', error: 'fake Anthropic server: ERROR400 requested' };
  if ((match = /^(RATE429|OVERLOAD529) (\d+|always)$/u.exec(prompt))) return { kind: prompt, text: match[2], refusal: match[1] === 'RATE429' ? 429 : 529 };
  return { kind: 'text', text: 'Hello from the fake Anthropic server.' };
}

function messageOf(id: string, model: string, reply: Reply, slow: string): Record<string, unknown> {
  const content: unknown[] = [{ type: 'text', text: reply.slow ? slow : reply.text ?? '' }];
  if (reply.tool) content.push({ type: 'tool_use', id: id.replace('msg_', 'toolu_'), name: reply.tool.name, input: reply.tool.input });
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: reply.tool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}
