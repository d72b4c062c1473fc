/**
 * A fake OpenAI Responses API on 127.0.0.1, for running the real `codex` CLI in tests
 * (spec/e2e/real-agents.spec.ts). It follows the contract recorded with Codex 0.171.0
 * (../shared/fixtures/README.md, section 2): `POST /v1/responses` answered as an SSE stream
 * of `event: <type>\ndata: {"type":<type>,"sequence_number":n,…}` frames (response.created,
 * response.in_progress, the output item with its content part and deltas, or a function
 * call with its arguments, then response.completed), errors as HTTP 400 with an OpenAI error
 * body.
 *
 * The answer depends on the input (Codex sends developer messages, a user
 * `<environment_context>` message, then the user's prompt):
 * - when the input ends with a `function_call_output`: `Tool finished: <first 60 chars>`;
 * - `TOOL:sh <cmd>`: `exec_command {cmd}`; `TOOL:bash`: `exec_command {cmd:"echo hi"}`;
 * - `TOOL:escalate <cmd>`: `exec_command {cmd, sandbox_permissions:"require_escalated", justification}`,
 *   which Codex asks approval for under `approvalPolicy: on-request` (codex-acp's modes);
 * - `TOOL:write <path>`: `exec_command` writing `hello\n` to `<path>` (Codex has no Write tool);
 * - `permission`: `exec_command {cmd:"touch <cwd>/new.txt"}`, a command Codex asks approval for
 *   under `approvalPolicy: untrusted` (the cwd from the `<environment_context>`);
 * - `SLOW` or `slow`: a long text, one word every 400 ms;
 * - `ERROR400`: HTTP 400;
 * - `RATE429 N`: the first N requests whose prompt it is get HTTP 429 (`rate_limit_exceeded`,
 *   `retry-after: 1`), the next ones the hello answer; `N` of `always`: every one;
 * - anything else: `Hello from the fake OpenAI server.` in 2 deltas.
 *
 * Only node:http. Bounded: the server closes itself after `idleMs` without a request in
 * flight (10 minutes by default), and `close()` ends every connection at once.
 */
import type { ServerResponse } from 'node:http';
import { json, modelOptions, slowText, sseAnswer, startLocalModelServer, type FakeModelOptions, type FakeModelServer, type RecordedRequest, type ServerTools } from './local-model-server.js';

export type { FakeModelServer, RecordedRequest } from './local-model-server.js';

/** Options of {@link startFakeOpenAI}. */
export type FakeOpenAIOptions = FakeModelOptions;

type Item = Record<string, unknown> & { type?: string; role?: string };

interface Reply {
  readonly kind: string;
  readonly text?: string;
  readonly command?: string;
  /** The command asks to run outside the sandbox (Codex asks approval for it under `on-request`). */
  readonly escalated?: boolean;
  readonly slow?: boolean;
  readonly error?: string;
  /** `RATE429 N`: how many requests with this prompt are refused (`always`: every one). */
  readonly rateLimits?: number;
}

/** Starts the fake OpenAI server on an ephemeral port of 127.0.0.1. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeModelServer> {
  const { idleMs, wordIntervalMs, slowWords } = modelOptions(options);
  let counter = 0;
  /** How many requests each `RATE429 N` prompt was refused so far. */
  const refused = new Map<string, number>();

  async function handle(recorded: RecordedRequest, response: ServerResponse, tools: ServerTools): Promise<void> {
    const { method, path, body } = recorded;
    if (method !== 'POST' || path !== '/v1/responses') {
      recorded.reply = 'not_found';
      json(response, 404, { error: { message: `fake OpenAI server: no ${method} ${path}`, type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    const params = (body ?? {}) as { model?: string; input?: Item[]; stream?: boolean };
    let reply = choose(params.input ?? []);
    if (reply.rateLimits !== undefined) {
      const times = refused.get(reply.kind) ?? 0;
      if (times < reply.rateLimits) {
        refused.set(reply.kind, times + 1);
        recorded.reply = '429';
        json(response, 429, { error: { message: 'fake OpenAI server: rate limited', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after': '1' });
        return;
      }
      reply = { kind: 'text', text: 'Hello from the fake OpenAI server.' };
    }
    recorded.reply = reply.kind;
    if (reply.error) {
      json(response, 400, { error: { message: reply.error, type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    counter += 1;
    const n = counter;
    const model = params.model ?? 'gpt-fake';
    const base = { id: `resp_fake_${n}`, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'in_progress', model, output: [] as unknown[], usage: null as unknown, error: null, incomplete_details: null };
    const usage = { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 19 };
    const finalText = reply.slow ? slowText(slowWords) : reply.text ?? '';
    const messageItem = (status: string, text: string) => ({ type: 'message', id: `msg_fake_${n}`, role: 'assistant', status, content: status === 'completed' ? [{ type: 'output_text', text, annotations: [] }] : [] });
    const args = reply.command === undefined ? '' : JSON.stringify(reply.escalated ? { cmd: reply.command, sandbox_permissions: 'require_escalated', justification: 'the test asks for it' } : { cmd: reply.command });
    const callItem = (status: string, argumentsText: string) => ({ type: 'function_call', id: `fc_fake_${n}`, call_id: `call_fake_${n}`, name: 'exec_command', arguments: argumentsText, status });
    if (params.stream === false) {
      const output = reply.command !== undefined ? [callItem('completed', args)] : [messageItem('completed', finalText)];
      json(response, 200, { ...base, status: 'completed', output, usage });
      return;
    }
    const write = sseAnswer(response, { 'x-request-id': `req_fake_${n}` });
    let sequence = 0;
    const send = (type: string, data: Record<string, unknown>) => write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
    send('response.created', { response: base });
    send('response.in_progress', { response: base });
    let output: unknown;
    if (reply.command !== undefined) {
      send('response.output_item.added', { output_index: 0, item: callItem('in_progress', '') });
      const cut = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, cut), args.slice(cut)]) if (part) send('response.function_call_arguments.delta', { item_id: `fc_fake_${n}`, output_index: 0, delta: part });
      send('response.function_call_arguments.done', { item_id: `fc_fake_${n}`, output_index: 0, arguments: args });
      output = callItem('completed', args);
    } else {
      const where = { item_id: `msg_fake_${n}`, output_index: 0, content_index: 0 };
      send('response.output_item.added', { output_index: 0, item: messageItem('in_progress', '') });
      send('response.content_part.added', { ...where, part: { type: 'output_text', text: '', annotations: [] } });
      const delta = (text: string) => send('response.output_text.delta', { ...where, delta: text, logprobs: [] });
      if (reply.slow) {
        if (!(await tools.streamSlowly(response, finalText, delta))) return;
      } else {
        const half = Math.ceil(finalText.length / 2);
        for (const part of [finalText.slice(0, half), finalText.slice(half)]) if (part) delta(part);
      }
      send('response.output_text.done', { ...where, text: finalText, logprobs: [] });
      send('response.content_part.done', { ...where, part: { type: 'output_text', text: finalText, annotations: [] } });
      output = messageItem('completed', finalText);
    }
    send('response.output_item.done', { output_index: 0, item: output });
    send('response.completed', { response: { ...base, status: 'completed', output: [output], usage } });
    response.end();
  }

  return startLocalModelServer({ idleMs, wordIntervalMs, handle, internalError: (error) => ({ error: { message: String(error), type: 'server_error', param: null, code: null } }) });
}

function textsOf(item: Item): string[] {
  if (typeof item.content === 'string') return [item.content];
  if (!Array.isArray(item.content)) return [];
  return (item.content as Item[]).map((part) => (typeof part.text === 'string' ? part.text : '')).filter(Boolean);
}

/** Codex's own context blocks (`<environment_context>…</environment_context>` and the like). */
const isContextBlock = (text: string) => /^<([\w -]+)>[\s\S]*<\/\1>$/u.test(text.trim());

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return (output as Item[]).map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
  if (output && typeof output === 'object' && typeof (output as { content?: unknown }).content === 'string') return (output as { content: string }).content;
  return '';
}

function cwdOf(input: Item[]): string | undefined {
  for (const item of input) {
    for (const text of textsOf(item)) {
      const match = /<cwd>([^<]+)<\/cwd>/u.exec(text);
      if (match) return match[1];
    }
  }
  return undefined;
}

const quote = (value: string) => (/^[\w@%+=:,./-]+$/u.test(value) ? value : `'${value.replace(/'/gu, `'\\''`)}'`);

function choose(input: Item[]): Reply {
  const last = input.at(-1);
  if (last?.type === 'function_call_output') {
    return { kind: 'text', text: `Tool finished: ${outputText(last.output).slice(0, 60)}` };
  }
  const users = input.filter((item) => (item.type === 'message' || item.type === undefined) && item.role === 'user');
  let prompt = '';
  for (const item of [...users].reverse()) {
    const text = textsOf(item).map((entry) => entry.trim()).filter((entry) => entry && !isContextBlock(entry)).at(-1);
    if (text !== undefined) {
      prompt = text;
      break;
    }
  }
  let match: RegExpExecArray | null;
  if ((match = /^TOOL:sh\s+([\s\S]+)$/u.exec(prompt))) return { kind: 'tool:exec_command', command: match[1] as string };
  if ((match = /^TOOL:escalate\s+([\s\S]+)$/u.exec(prompt))) return { kind: 'tool:exec_command', command: match[1] as string, escalated: true };
  if (/^TOOL:bash$/u.test(prompt)) return { kind: 'tool:exec_command', command: 'echo hi' };
  if ((match = /^TOOL:write\s+(.+)$/u.exec(prompt))) return { kind: 'tool:exec_command', command: `printf 'hello\\n' > ${quote(match[1] as string)}` };
  if (/^permission$/iu.test(prompt)) {
    const cwd = cwdOf(input);
    return { kind: 'tool:exec_command', command: `touch ${cwd ? quote(`${cwd}/new.txt`) : 'new.txt'}` };
  }
  if (/^slow$/iu.test(prompt)) return { kind: 'slow', slow: true };
  if (prompt === 'ERROR400') return { kind: 'error400', error: 'fake OpenAI server: ERROR400 requested' };
  if ((match = /^RATE429 (\d+|always)$/u.exec(prompt))) return { kind: prompt, rateLimits: match[1] === 'always' ? Infinity : Number(match[1]) };
  return { kind: 'text', text: 'Hello from the fake OpenAI server.' };
}
