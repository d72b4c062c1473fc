/**
 * A fake Gemini API (generativelanguage v1beta) on 127.0.0.1, for running the real `gemini`
 * CLI in tests (spec/e2e/launch-native-agents.spec.ts). It follows what Gemini CLI 0.61.0 was
 * recorded calling with `GOOGLE_GEMINI_BASE_URL` set (../shared/fixtures/README.md, section 4):
 * - `POST /v1beta/models/<model>:generateContent`: one JSON answer. A JSON-mode call
 *   (`generationConfig.responseMimeType: "application/json"`, the CLI's model classifier)
 *   gets a JSON object built from its `responseJsonSchema` (or `responseSchema`) as the text;
 * - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`: `data: <GenerateContentResponse>`
 *   frames ended by `\r\n\r\n`, the last with `finishReason: "STOP"` and `usageMetadata`.
 *
 * The answer depends on the last text of the last `role: "user"` content:
 * - `SLOW` or `slow`: a long text, one word every 400 ms;
 * - `ERROR400`: HTTP 400 with a Google error body;
 * - anything else: `Hello from the fake Gemini server.` in 2 chunks.
 *
 * Only node:http. Bounded like the other fakes (local-model-server.ts).
 */
import type { ServerResponse } from 'node:http';
import { json, modelOptions, slowText, sseAnswer, startLocalModelServer, type FakeModelOptions, type FakeModelServer, type RecordedRequest, type ServerTools } from './local-model-server.js';

export type { FakeModelServer, RecordedRequest } from './local-model-server.js';

/** Options of {@link startFakeGemini}. */
export type FakeGeminiOptions = FakeModelOptions;

/** The text of a `hello` answer. */
export const geminiHello = 'Hello from the fake Gemini server.';

interface Content {
  readonly role?: string;
  readonly parts?: ReadonlyArray<{ readonly text?: string }>;
}

interface GenerateRequest {
  readonly contents?: readonly Content[];
  readonly generationConfig?: { readonly responseMimeType?: string; readonly responseJsonSchema?: unknown; readonly responseSchema?: unknown };
}

const modelCall = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/u;

/** Starts the fake Gemini server on an ephemeral port of 127.0.0.1. */
export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeModelServer> {
  const { idleMs, wordIntervalMs, slowWords } = modelOptions(options);
  let counter = 0;

  async function handle(recorded: RecordedRequest, response: ServerResponse, tools: ServerTools): Promise<void> {
    const { method, path, body } = recorded;
    const call = modelCall.exec(path);
    if (method !== 'POST' || !call) {
      recorded.reply = 'not_found';
      json(response, 404, { error: { code: 404, message: `fake Gemini server: no ${method} ${path}`, status: 'NOT_FOUND' } });
      return;
    }
    const model = call[1] as string;
    const request = (body ?? {}) as GenerateRequest;
    counter += 1;
    const frame = (text: string, last: boolean) => ({
      candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
      ...(last ? { usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 } } : {}),
      modelVersion: model,
      responseId: `resp_fake_${counter}`,
    });
    if (request.generationConfig?.responseMimeType === 'application/json') {
      recorded.reply = 'json';
      const schema = request.generationConfig.responseJsonSchema ?? request.generationConfig.responseSchema;
      json(response, 200, frame(JSON.stringify(sampleOf(schema)), true));
      return;
    }
    const prompt = lastUserText(request.contents ?? []);
    if (prompt === 'ERROR400') {
      recorded.reply = 'error400';
      json(response, 400, { error: { code: 400, message: 'fake Gemini server: ERROR400 requested', status: 'INVALID_ARGUMENT' } });
      return;
    }
    const slow = /^slow$/iu.test(prompt);
    recorded.reply = slow ? 'slow' : 'text';
    const text = slow ? slowText(slowWords) : geminiHello;
    if (call[2] === 'generateContent') {
      json(response, 200, frame(text, true));
      return;
    }
    const write = sseAnswer(response);
    const send = (chunk: string, last: boolean) => write(`data: ${JSON.stringify(frame(chunk, last))}\r\n\r\n`);
    if (slow) {
      if (!(await tools.streamSlowly(response, text, (word) => send(word, false)))) return;
      send('', true);
    } else {
      const half = Math.ceil(text.length / 2);
      send(text.slice(0, half), false);
      send(text.slice(half), true);
    }
    response.end();
  }

  return startLocalModelServer({ idleMs, wordIntervalMs, handle, internalError: (error) => ({ error: { code: 500, message: String(error), status: 'INTERNAL' } }) });
}

/** The last non-empty text part of the last user content (the CLI puts its context first). */
function lastUserText(contents: readonly Content[]): string {
  const users = contents.filter((content) => content.role === 'user');
  for (const content of [...users].reverse()) {
    const text = (content.parts ?? []).map((part) => (part.text ?? '').trim()).filter(Boolean).at(-1);
    if (text !== undefined) return text;
  }
  return '';
}

/** A value that satisfies a (JSON or OpenAPI-style) schema: first enum value, empty strings, zeros. */
function sampleOf(schema: unknown): unknown {
  const node = (schema ?? {}) as { type?: string | string[]; enum?: unknown[]; properties?: Record<string, unknown>; items?: unknown; anyOf?: unknown[] };
  if (node.enum && node.enum.length > 0) return node.enum[0];
  if (node.anyOf && node.anyOf.length > 0) return sampleOf(node.anyOf[0]);
  const type = (Array.isArray(node.type) ? node.type[0] : node.type)?.toLowerCase();
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(node.properties ?? {}).map(([name, property]) => [name, sampleOf(property)]));
    case 'array':
      return [];
    case 'string':
      return 'fake';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    default:
      return node.properties ? sampleOf({ ...node, type: 'object' }) : 'fake';
  }
}
