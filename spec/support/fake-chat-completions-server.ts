/**
 * A fake OpenAI Chat Completions API on 127.0.0.1, for running the real `opencode` CLI in
 * tests (spec/e2e/launch-native-agents.spec.ts) through its `@ai-sdk/openai-compatible`
 * provider. It follows what opencode 1.18.33 was recorded calling (../shared/fixtures/README.md,
 * section 4): `POST /v1/chat/completions` with `stream: true` answered as
 * `data: <chat.completion.chunk>` frames (a role delta, content deltas, `finish_reason:
 * "stop"`, a usage-only chunk with `choices: []`, then `data: [DONE]`); `stream: false` gets
 * one `chat.completion`.
 *
 * The answer depends on the last user message's text:
 * - a call without tools (opencode's title generation): `Fake title`;
 * - `SLOW` or `slow`: a long text, one word every 400 ms;
 * - `ERROR400`: HTTP 400 with an OpenAI error body;
 * - anything else: `Hello from the fake OpenAI server.` in 2 deltas.
 *
 * (The Responses API fake for Codex is fake-openai-server.ts.) Only node:http; bounded like the
 * other fakes (local-model-server.ts).
 */
import type { ServerResponse } from 'node:http';
import { json, modelOptions, slowText, sseAnswer, startLocalModelServer, type FakeModelOptions, type FakeModelServer, type RecordedRequest, type ServerTools } from './local-model-server.js';

export type { FakeModelServer, RecordedRequest } from './local-model-server.js';

/** Options of {@link startFakeChatCompletions}. */
export type FakeChatCompletionsOptions = FakeModelOptions;

/** The text of a `hello` answer. */
export const chatHello = 'Hello from the fake OpenAI server.';

interface Message {
  readonly role?: string;
  readonly content?: string | ReadonlyArray<{ readonly type?: string; readonly text?: string }>;
}

interface ChatRequest {
  readonly model?: string;
  readonly messages?: readonly Message[];
  readonly tools?: readonly unknown[];
  readonly stream?: boolean;
}

/** Starts the fake Chat Completions server on an ephemeral port of 127.0.0.1. */
export async function startFakeChatCompletions(options: FakeChatCompletionsOptions = {}): Promise<FakeModelServer> {
  const { idleMs, wordIntervalMs, slowWords } = modelOptions(options);
  let counter = 0;

  async function handle(recorded: RecordedRequest, response: ServerResponse, tools: ServerTools): Promise<void> {
    const { method, path, body } = recorded;
    if (method !== 'POST' || path !== '/v1/chat/completions') {
      recorded.reply = 'not_found';
      json(response, 404, { error: { message: `fake Chat Completions server: no ${method} ${path}`, type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    const request = (body ?? {}) as ChatRequest;
    const prompt = lastUserText(request.messages ?? []);
    if (prompt === 'ERROR400') {
      recorded.reply = 'error400';
      json(response, 400, { error: { message: 'fake Chat Completions server: ERROR400 requested', type: 'invalid_request_error', param: null, code: null } });
      return;
    }
    const titleCall = (request.tools ?? []).length === 0;
    const slow = !titleCall && /^slow$/iu.test(prompt);
    recorded.reply = titleCall ? 'title' : slow ? 'slow' : 'text';
    const text = titleCall ? 'Fake title' : slow ? slowText(slowWords) : chatHello;
    counter += 1;
    const id = `chatcmpl-fake-${counter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = request.model ?? 'gpt-fake';
    const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };
    if (request.stream !== true) {
      json(response, 200, { id, object: 'chat.completion', created, model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage });
      return;
    }
    const write = sseAnswer(response);
    const send = (data: unknown) => write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] });
    send(chunk({ role: 'assistant', content: '' }, null));
    if (slow) {
      if (!(await tools.streamSlowly(response, text, (word) => send(chunk({ content: word }, null))))) return;
    } else {
      const half = Math.ceil(text.length / 2);
      send(chunk({ content: text.slice(0, half) }, null));
      send(chunk({ content: text.slice(half) }, null));
    }
    send(chunk({}, 'stop'));
    send({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
    send('[DONE]');
    response.end();
  }

  return startLocalModelServer({ idleMs, wordIntervalMs, handle, internalError: (error) => ({ error: { message: String(error), type: 'server_error', param: null, code: null } }) });
}

/** The last non-empty text of the last user message. */
function lastUserText(messages: readonly Message[]): string {
  for (const message of [...messages].reverse()) {
    if (message.role !== 'user') continue;
    const texts = typeof message.content === 'string' ? [message.content] : (message.content ?? []).map((part) => part.text ?? '');
    const text = texts.map((entry) => entry.trim()).filter(Boolean).at(-1);
    if (text !== undefined) return text;
  }
  return '';
}
