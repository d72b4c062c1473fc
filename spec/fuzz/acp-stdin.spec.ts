/**
 * Fuzzing `warden acp`'s stdin: one real warden (`acp --agent demo --store :memory:`) per
 * run of this file, fed batches of generated and mutated lines (truncated JSON, wrong types,
 * huge numbers, deep nesting, invalid UTF-8, ids of every type, unknown methods, lifecycle
 * calls out of order) interleaved with valid traffic (initialize, session/new, session/prompt,
 * session/list).
 *
 * The expected answer of each line is computed by an oracle written here from JSON-RPC 2.0,
 * docs/jsonrpc.md and docs/acp.md (never from src's classifier), on the very bytes sent: the
 * line is split, decoded and parsed as warden's framer does (a bad UTF-8 byte inside a string
 * becomes U+FFFD and the line may still be valid JSON).
 *
 * Properties: warden never dies and answers a final valid request; each request (valid id and
 * method) gets exactly one response, with the code the oracle names; notifications and
 * response-shaped lines get none; invalid JSON gets -32700 with id null; the valid traffic
 * is served as if alone; stdout carries only JSON-RPC messages.
 *
 * Inputs per run: FUZZ_ACP_RUNS batches after initialize (default 180) and FUZZ_ACP_PRE_RUNS
 * before it (default 12), 50 to 90 lines each: about 11,000 generated or mutated lines and
 * 1,300 valid requests. FUZZ_SEED replays a seed;
 * FUZZ_SHRINK=1 lets fast-check shrink a failure (slow: each try goes through warden).
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { agentRequests, unstableAgentRequests } from '../../src/protocol/methods.js';
import { parserOf } from '../../src/acp/schemas.js';
import { launchFuzzWarden, type FuzzWarden, type WireResponse } from '../support/fuzz-warden.js';

const seed = Number(process.env.FUZZ_SEED ?? 20261130);
const mainRuns = Number(process.env.FUZZ_ACP_RUNS ?? 180);
const preRuns = Number(process.env.FUZZ_ACP_PRE_RUNS ?? 12);
const shrink = process.env.FUZZ_SHRINK === '1';
const maxLineBytes = 1024 * 1024;

// ---------------------------------------------------------------------------------------
// The oracle

type Expectation =
  | { readonly kind: 'none' }
  | { readonly kind: 'nullError'; readonly code: number }
  | { readonly kind: 'answer'; readonly key: string; readonly codes: readonly number[] | 'result' | 'any'; readonly method: string };

interface OracleState {
  initialized: boolean;
  /** Sessions the valid traffic created and did not close. */
  readonly sessions: Set<string>;
}

const knownMethods = new Set(Object.keys(agentRequests));
const isId = (id: unknown): id is string | number => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));

function paramsValid(method: string, params: unknown): boolean {
  try {
    if (method === 'session/fork') parserOf(unstableAgentRequests['session/fork'].params, 'unstable')(params);
    else parserOf(agentRequests[method as keyof typeof agentRequests].params)(params);
    return true;
  } catch {
    return false;
  }
}

/** How deep `value` nests objects and arrays (a scalar: 0, `{}`: 1); counted without recursion, so any depth the fuzzer makes is fine. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** What warden must answer to `value` (one parsed line), per JSON-RPC 2.0 and the docs. */
function expectationOf(value: unknown, state: OracleState): Expectation {
  const invalid = (id: unknown): Expectation => (isId(id) ? { kind: 'answer', key: JSON.stringify(id), codes: [-32600], method: '' } : { kind: 'nullError', code: -32600 });
  // A batch (ACP has none, docs/jsonrpc.md) or a scalar: -32600 with id null.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'nullError', code: -32600 };
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return invalid(message.id);
  if ('method' in message) {
    if (typeof message.method !== 'string' || message.method === '') return invalid(message.id);
    const params = message.params;
    if (params !== undefined && (typeof params !== 'object' || params === null)) return 'id' in message ? invalid(message.id) : { kind: 'none' };
    if (!('id' in message)) return { kind: 'none' }; // a notification: never answered
    if (!isId(message.id)) return { kind: 'nullError', code: -32600 };
    // Params nested deeper than 128 levels are refused unread, whatever the method (docs/jsonrpc.md, "Depth limit").
    if (depthOf(params) > 128) return { kind: 'answer', key: JSON.stringify(message.id), codes: [-32602], method: message.method };
    return requestExpectation(JSON.stringify(message.id), message.method, params ?? {}, state);
  }
  // Responses are never answered (there is no request of warden's they could match here).
  if (('result' in message || 'error' in message) && (isId(message.id) || message.id === null)) return { kind: 'none' };
  return invalid(message.id);
}

function requestExpectation(key: string, method: string, params: unknown, state: OracleState): Expectation {
  const answer = (codes: readonly number[] | 'result' | 'any'): Expectation => ({ kind: 'answer', key, codes, method });
  // session/fork (unstable) is served: the demo agent forks (docs/acp.md, "The host's sessions").
  if (!Object.hasOwn(agentRequests, method) && method !== 'session/fork') return answer([-32601]);
  if (method === 'initialize') return answer(paramsValid(method, params) ? 'result' : [-32602]);
  if (!state.initialized) return answer([-32600]); // whatever the params (docs/acp.md)
  if (!paramsValid(method, params)) return answer([-32602]);
  const sessionId = (params as { sessionId?: unknown }).sessionId;
  const known = typeof sessionId === 'string' && state.sessions.has(sessionId);
  switch (method) {
    case 'authenticate':
      return answer([-32601]); // no auth methods advertised
    case 'logout':
    case 'session/delete':
      return answer('result');
    case 'session/list':
      // A cursor warden did not hand out is invalid params (-32602); an empty one is no cursor.
      return [undefined, null, ''].includes((params as { cursor?: unknown }).cursor as string) ? answer('result') : answer([-32602]);
    case 'session/new': {
      const cwd = (params as { cwd?: unknown }).cwd;
      return typeof cwd === 'string' && !cwd.startsWith('/') ? answer([-32602]) : answer('any');
    }
    case 'session/load':
    case 'session/resume': {
      // The setup gate (absolute cwd, MCP transports, additionalDirectories) comes before the host's -32002.
      const setup = params as { cwd?: unknown; mcpServers?: unknown[]; additionalDirectories?: unknown[] };
      if (typeof setup.cwd === 'string' && !setup.cwd.startsWith('/')) return answer([-32602]);
      if (known) return answer('any');
      return (setup.mcpServers?.length ?? 0) > 0 || (setup.additionalDirectories?.length ?? 0) > 0 ? answer([-32002, -32602]) : answer([-32002]);
    }
    case 'session/fork': {
      // The source must be known to this connection (-32002) before the setup gate looks at the rest.
      if (!known) return answer([-32002]);
      const cwd = (params as { cwd?: unknown }).cwd;
      return typeof cwd === 'string' && !cwd.startsWith('/') ? answer([-32602]) : answer('any');
    }
    case 'session/prompt':
    case 'session/close':
    case 'session/set_mode':
    case 'session/set_config_option':
      return known ? answer('any') : answer([-32002]);
    default:
      return answer('any');
  }
}

/** Splits, decodes and parses bytes as warden's framer does, one expectation per line. */
function expectationsOf(bytes: Buffer, state: OracleState): Expectation[] {
  const out: Expectation[] = [];
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    let last = end;
    if (end - start > maxLineBytes) {
      out.push({ kind: 'nullError', code: -32700 });
    } else {
      if (last > start && bytes[last - 1] === 0x0d) last -= 1;
      if (last > start) {
        const text = bytes.toString('utf8', start, last);
        let value: unknown;
        let parsed = true;
        try {
          value = JSON.parse(text);
        } catch {
          parsed = false;
        }
        out.push(parsed ? expectationOf(value, state) : { kind: 'nullError', code: -32700 });
      }
    }
    start = end + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Generators

/** How a garbage message's id is written: ids of every type JSON has, and some it has not. */
const idKinds = ['string', 'int', 'float', 'negative', 'hugeInt', 'null', 'object', 'array', 'bool', 'missing', 'infinite', 'emptyString', 'unicode'] as const;
type IdKind = (typeof idKinds)[number];

const sessionBound = ['session/prompt', 'session/close', 'session/set_mode', 'session/set_config_option', 'session/load', 'session/resume', 'session/fork'];
const weirdMethods = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '$/cancel_request', 'session/update', 'fs/read_text_file', '_fuzz/ext', 'session/prompt ', 'SESSION/PROMPT', 'session\u0000prompt', '\ud800', 'initialize/', 'session/', '🙂'];

const unknownSession = fc.string({ maxLength: 12 }).map((s) => `fuzz-nope-${s}`);
const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Params that are plausible, wrong-typed or random, for a method. */
function paramsFor(method: string): fc.Arbitrary<unknown> {
  const prompt = fc.array(fc.oneof(fc.record({ type: fc.constant('text'), text: fc.string() }), fc.record({ type: fc.constantFrom('image', 'audio', 'resource', 'bogus'), data: fc.string() }), anyJson), { maxLength: 3 });
  const plausible: Record<string, fc.Arbitrary<unknown>> = {
    initialize: fc.record({ protocolVersion: fc.oneof(fc.constant('1'), fc.double(), fc.constant(-1), fc.constant(null)), clientCapabilities: anyJson }, { requiredKeys: [] }),
    authenticate: fc.record({ methodId: fc.oneof(fc.string(), fc.integer()) }, { requiredKeys: [] }),
    logout: fc.oneof(fc.constant({}), fc.record({ _meta: anyJson })),
    'session/new': fc.record({ cwd: fc.oneof(fc.constant('relative/dir'), fc.constant('/tmp'), fc.integer(), fc.string()), mcpServers: fc.oneof(fc.constant([]), anyJson) }, { requiredKeys: [] }),
    'session/list': fc.oneof(fc.constant({}), fc.record({ cursor: fc.oneof(fc.string(), fc.integer()), cwd: fc.oneof(fc.string(), fc.constant(null)) }, { requiredKeys: [] })),
    'session/delete': fc.record({ sessionId: fc.oneof(unknownSession, fc.integer(), fc.constant(null)) }, { requiredKeys: [] }),
    'session/prompt': fc.record({ sessionId: fc.oneof(unknownSession, unknownSession, fc.integer(), fc.constant(null)), prompt: fc.oneof(prompt, prompt, anyJson) }, { requiredKeys: [] }),
    'session/close': fc.record({ sessionId: fc.oneof(unknownSession, fc.integer()) }, { requiredKeys: [] }),
    'session/set_mode': fc.record({ sessionId: fc.oneof(unknownSession, fc.integer()), modeId: fc.oneof(fc.constant('auto'), fc.string()) }, { requiredKeys: [] }),
    'session/set_config_option': fc.record({ sessionId: unknownSession, configId: fc.constant('model'), value: fc.oneof(fc.constant('demo-fast'), fc.string(), fc.boolean()) }, { requiredKeys: [] }),
    'session/load': fc.record({ sessionId: unknownSession, cwd: fc.oneof(fc.constant('/tmp'), fc.string()), mcpServers: fc.constant([]) }, { requiredKeys: [] }),
    'session/resume': fc.record({ sessionId: unknownSession, cwd: fc.oneof(fc.constant('/tmp'), fc.string()), mcpServers: fc.constant([]) }, { requiredKeys: [] }),
    'session/fork': fc.record({ sessionId: unknownSession, cwd: fc.constant('/tmp'), mcpServers: fc.constant([]) }),
  };
  return fc.oneof(
    { weight: 6, arbitrary: Object.hasOwn(plausible, method) ? (plausible[method] as fc.Arbitrary<unknown>) : anyJson },
    { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.integer(), fc.string(), fc.boolean(), fc.array(anyJson, { maxLength: 3 })) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...knownMethods, 'session/fork') },
  { weight: 2, arbitrary: fc.constantFrom(...sessionBound) },
  { weight: 2, arbitrary: fc.constantFrom(...weirdMethods) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) },
);

/** Byte-level mutations, applied to the serialised line. */
type Mutation =
  | { readonly kind: 'truncate'; readonly at: number }
  | { readonly kind: 'badUtf8'; readonly at: number; readonly bytes: readonly number[] }
  | { readonly kind: 'flip'; readonly at: number; readonly byte: number }
  | { readonly kind: 'crlf' }
  | { readonly kind: 'nest'; readonly depth: number; readonly open: '[' | '{"a":' }
  | { readonly kind: 'hugeNumber'; readonly literal: string }
  | { readonly kind: 'padding'; readonly size: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('badUtf8' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.array(fc.oneof(fc.integer({ min: 0x80, max: 0xff }), fc.constantFrom(0xc0, 0xc1, 0xed, 0xf5, 0xff, 0xfe)), { minLength: 1, maxLength: 4 }) }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), byte: fc.integer({ min: 0, max: 255 }).filter((byte) => byte !== 0x0a) }),
  fc.record({ kind: fc.constant('crlf' as const) }),
  fc.record({ kind: fc.constant('nest' as const), depth: fc.integer({ min: 50, max: 20_000 }), open: fc.constantFrom('[' as const, '{"a":' as const) }),
  fc.record({ kind: fc.constant('hugeNumber' as const), literal: fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', '1e-400', '0.1e999999', '9007199254740993', '-0') }),
  fc.record({ kind: fc.constant('padding' as const), size: fc.integer({ min: 1_000, max: 200_000 }) }),
);

/** One input of a batch. */
type Input =
  | { readonly kind: 'raw'; readonly bytes: readonly number[] }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'message'; readonly jsonrpc: unknown; readonly idKind: IdKind; readonly method: string | unknown; readonly hasMethod: boolean; readonly params: unknown; readonly extra: unknown; readonly mutations: readonly Mutation[] }
  | { readonly kind: 'response'; readonly idKind: IdKind; readonly result: unknown; readonly error: unknown; readonly mutations: readonly Mutation[] }
  | { readonly kind: 'valid'; readonly op: 'prompt' | 'list' | 'promptClosed' | 'cancelled' | 'newSession'; readonly text: string };

const safeWord = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'ünï', 'çödé', '日本', 'x', 'forty-two', '"quoted"', 'back\\slash', 'tab\there');

const input: fc.Arbitrary<Input> = fc.oneof(
  // Not JSON: random bytes (no newline), random text, bare words.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }).filter((byte) => byte !== 0x0a), { minLength: 1, maxLength: 60 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('text' as const), text: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('{', '}', '[', 'null', 'true', '1', '"x"', '{"jsonrpc":"2.0"}', '[]', '[{"jsonrpc":"2.0","id":1,"method":"session/list"}]', '{"jsonrpc":"1.0","id":"v1","method":"session/list"}', '\ufeff{}', 'NaN', '{"jsonrpc":"2.0","id":1,}', "{'jsonrpc':'2.0'}"), fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value))).map((text) => text.replaceAll('\n', ' ')) }) },
  // Message-shaped: right or wrong jsonrpc, any method, any params, ids of every kind, mutated.
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('message' as const),
      jsonrpc: fc.oneof({ weight: 8, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.constantFrom('1.0', 2, null, '2.0 ', undefined) }),
      idKind: fc.constantFrom(...idKinds),
      method: fc.oneof({ weight: 10, arbitrary: method }, { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(''), fc.constant(null), fc.array(fc.string(), { maxLength: 2 })) }),
      hasMethod: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      params: fc.constant(null),
      extra: fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: anyJson }),
      mutations: fc.oneof({ weight: 3, arbitrary: fc.constant([] as Mutation[]) }, { weight: 2, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }) }),
    }).chain((draft) => paramsFor(typeof draft.method === 'string' ? draft.method : '').map((params) => ({ ...draft, params }))),
  },
  // Response-shaped: answers to nothing.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('response' as const), idKind: fc.constantFrom(...idKinds), result: anyJson, error: fc.oneof(fc.constant(undefined), anyJson, fc.record({ code: fc.integer(), message: fc.string() })), mutations: fc.oneof(fc.constant([] as Mutation[]), fc.array(mutation, { maxLength: 1 })) }) },
  // Valid traffic, interleaved.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('valid' as const), op: fc.constantFrom('prompt' as const, 'prompt' as const, 'list' as const, 'promptClosed' as const, 'cancelled' as const, 'newSession' as const), text: fc.array(safeWord, { minLength: 0, maxLength: 6 }).map((words) => words.join(' ')) }) },
);

// ---------------------------------------------------------------------------------------
// Materialising inputs: unique ids, serialisation, mutations

let counter = 0;
const usedKeys = new Set<string>();

function idFor(kind: IdKind): { present: boolean; value?: unknown; literal?: string } {
  const n = ++counter;
  switch (kind) {
    case 'string': return { present: true, value: `f-${n}` };
    case 'int': return { present: true, value: 10_000_000 + n };
    case 'float': return { present: true, value: 20_000_000 + n + 0.25 };
    case 'negative': return { present: true, value: -(30_000_000 + n) };
    case 'hugeInt': return { present: true, literal: `${40_000 + n}000000000000000000000` };
    case 'null': return { present: true, value: null };
    case 'object': return { present: true, value: { n } };
    case 'array': return { present: true, value: [n] };
    case 'bool': return { present: true, value: n % 2 === 0 };
    case 'missing': return { present: false };
    case 'infinite': return { present: true, literal: n % 2 === 0 ? '1e400' : '-1e999' };
    case 'emptyString': return { present: true, value: '' };
    case 'unicode': return { present: true, value: `ü-\u2028-🙂-${n}` };
  }
}

function serialise(fields: Array<[string, unknown, string?]>): string {
  // Fields in the given order; a literal replaces the JSON of a value (huge numbers).
  return `{${fields.filter(([, value, literal]) => value !== undefined || literal !== undefined).map(([name, value, literal]) => `${JSON.stringify(name)}:${literal ?? JSON.stringify(value)}`).join(',')}}`;
}

function applyMutations(line: string, mutations: readonly Mutation[]): Buffer {
  let bytes = Buffer.from(line, 'utf8');
  for (const change of mutations) {
    const at = (fraction: number) => Math.min(bytes.length, Math.floor(fraction * bytes.length));
    switch (change.kind) {
      case 'truncate':
        bytes = bytes.subarray(0, at(change.at));
        break;
      case 'badUtf8': {
        const index = at(change.at);
        bytes = Buffer.concat([bytes.subarray(0, index), Buffer.from(change.bytes), bytes.subarray(index)]);
        break;
      }
      case 'flip': {
        const index = Math.min(bytes.length - 1, at(change.at));
        if (index >= 0) {
          bytes = Buffer.from(bytes);
          bytes[index] = change.byte;
        }
        break;
      }
      case 'crlf':
        bytes = Buffer.concat([bytes, Buffer.from('\r')]);
        break;
      case 'nest': {
        // Deep nesting, as the value of "params" when there is one, else as the whole line.
        const close = change.open === '[' ? ']' : '}';
        const deep = `${change.open.repeat(change.depth)}1${close.repeat(change.depth)}`;
        const text = bytes.toString('latin1');
        const index = text.indexOf('"params":');
        bytes = index >= 0
          ? Buffer.concat([bytes.subarray(0, index), Buffer.from(`"params":{"_meta":${deep},"x":`), bytes.subarray(index + 9), Buffer.from('}')])
          : Buffer.from(deep);
        break;
      }
      case 'hugeNumber': {
        const text = bytes.toString('latin1');
        const index = text.indexOf(':0');
        bytes = index >= 0 ? Buffer.concat([bytes.subarray(0, index + 1), Buffer.from(change.literal), bytes.subarray(index + 2)]) : Buffer.concat([Buffer.from(`[${change.literal},`), bytes, Buffer.from(']')]);
        break;
      }
      case 'padding': {
        // Whitespace before the closing brace: large lines, still valid.
        const last = bytes.lastIndexOf(0x7d);
        if (last >= 0) bytes = Buffer.concat([bytes.subarray(0, last), Buffer.alloc(change.size, 0x20), bytes.subarray(last)]);
        break;
      }
    }
  }
  return bytes;
}

function messageBytes(item: Extract<Input, { kind: 'message' | 'response' }>): Buffer {
  const id = idFor(item.idKind);
  const idField: [string, unknown, string?] = id.present ? ['id', id.value, id.literal] : ['id', undefined];
  let line: string;
  if (item.kind === 'message') {
    const fields: Array<[string, unknown, string?]> = [['jsonrpc', item.jsonrpc], idField];
    if (item.hasMethod) fields.push(['method', item.method]);
    fields.push(['params', item.params]);
    if (item.extra !== undefined) fields.push(['zz', item.extra]);
    line = serialise(fields);
  } else {
    line = serialise([['jsonrpc', '2.0'], idField, ['result', item.result], ['error', item.error]]);
  }
  return applyMutations(line, item.mutations);
}

// ---------------------------------------------------------------------------------------
// Running batches against warden

interface Pending {
  readonly key: string;
  readonly codes: readonly number[] | 'result' | 'any';
  readonly method: string;
  readonly what: string;
  readonly check?: (response: WireResponse) => void;
}

interface Run {
  readonly warden: FuzzWarden;
  readonly state: OracleState;
  /** The session the valid traffic prompts. */
  liveSession: string;
  expectedNull: number;
  linesSent: number;
  valid: number;
  garbage: number;
  readonly cwd: string;
}

const preview = (bytes: Buffer) => JSON.stringify(bytes.toString('latin1').slice(0, 160));

async function runBatch(run: Run, inputs: readonly Input[]): Promise<void> {
  const { warden, state } = run;
  const pending: Pending[] = [];
  const silent: string[] = []; // ids that must never be answered
  const textsBefore = warden.updates.length;
  const prompted: string[] = [];
  let cancelledSession: string | undefined;
  const chunks: Buffer[] = [];
  const flush = () => {
    if (chunks.length > 0) warden.write(Buffer.concat(chunks.splice(0)));
  };
  const expectLine = (bytes: Buffer, what: string) => {
    const expectations = expectationsOf(bytes, state);
    for (const expectation of expectations) {
      if (expectation.kind === 'nullError') run.expectedNull += 1;
      if (expectation.kind === 'answer') {
        if (usedKeys.has(expectation.key)) return false; // a mutation made an id collide: not sent
        usedKeys.add(expectation.key);
        pending.push({ key: expectation.key, codes: expectation.codes, method: expectation.method, what });
      }
    }
    return true;
  };
  for (const item of inputs) {
    if (item.kind === 'valid') {
      flush();
      await sendValid(run, item, pending, prompted, (sessionId) => (cancelledSession = sessionId));
      continue;
    }
    let bytes: Buffer;
    if (item.kind === 'raw') bytes = Buffer.from(item.bytes);
    else if (item.kind === 'text') bytes = Buffer.from(item.text, 'utf8');
    else bytes = messageBytes(item);
    if (bytes.includes(0x0a)) bytes = Buffer.from(bytes.toString('latin1').replaceAll('\n', ' '), 'latin1');
    // A valid initialize is left out of the garbage: BUG (found by this fuzzer, see the pending
    // test at the end): a second initialize starts another agent process and loses the open sessions.
    const probe = expectationsOf(bytes, state);
    if (probe.some((expectation) => expectation.kind === 'answer' && expectation.method === 'initialize' && expectation.codes === 'result')) continue;
    if (item.kind === 'response') {
      try {
        const id = (JSON.parse(bytes.toString('utf8')) as { id?: unknown }).id;
        if (isId(id)) {
          if (usedKeys.has(JSON.stringify(id))) continue; // its id was a request's: ambiguous, not sent
          usedKeys.add(JSON.stringify(id));
          silent.push(JSON.stringify(id));
        }
      } catch {
        // not JSON: answered -32700
      }
    }
    const state0 = run.expectedNull;
    const pendingLength = pending.length;
    if (!expectLine(bytes, preview(bytes))) {
      run.expectedNull = state0;
      pending.length = pendingLength;
      continue;
    }
    chunks.push(bytes, Buffer.from('\n'));
    run.linesSent += 1;
    run.garbage += 1;
  }
  flush();
  // A sentinel: answered -32601 synchronously, after every line before it.
  const sentinel = `sync-${++counter}`;
  warden.write(`${JSON.stringify({ jsonrpc: '2.0', id: sentinel, method: '_fuzz/sync' })}\n`);
  pending.push({ key: JSON.stringify(sentinel), codes: [-32601], method: '_fuzz/sync', what: 'the sentinel' });
  await warden.waitFor(
    () => pending.every((entry) => warden.responses.has(entry.key)) && warden.nullResponses.length >= run.expectedNull,
    `answers to ${pending.filter((entry) => !warden.responses.has(entry.key)).map((entry) => `${entry.what} (${entry.key})`).slice(0, 5).join(', ')}; null-id errors ${warden.nullResponses.length}/${run.expectedNull}`,
  );
  // Nothing else may come: answers are written as soon as they are decided.
  await new Promise((resolve) => setTimeout(resolve, 5));
  expect(warden.alive(), 'warden is still running').to.equal(true);
  expect(warden.strayLines, 'stdout carries only JSON-RPC messages').to.deep.equal([]);
  expect(warden.nullResponses.length, 'one -32700/-32600 with id null per unreadable line, no more').to.equal(run.expectedNull);
  for (const [index, response] of warden.nullResponses.entries()) {
    expect([-32700, -32600], `null-id error #${index}`).to.include(response.error?.code);
  }
  for (const entry of pending) {
    const answers = warden.responses.get(entry.key) as WireResponse[];
    expect(answers, `exactly one answer to ${entry.what} (${entry.key})`).to.have.length(1);
    const answer = answers[0] as WireResponse;
    if (entry.codes === 'result') expect(answer.error, `${entry.method} ${entry.what} succeeds`).to.equal(undefined);
    else if (entry.codes !== 'any') expect(answer.error?.code, `the error code of ${entry.method} ${entry.what}: ${JSON.stringify(answer).slice(0, 300)}`).to.be.oneOf(entry.codes as number[]);
    if (answer.error) expect(answer.error.code, `never an internal error: ${entry.method} ${entry.what}: ${JSON.stringify(answer).slice(0, 500)}`).to.not.equal(-32603);
    entry.check?.(answer);
  }
  for (const key of silent) expect(warden.responses.has(key), `no answer to a response (${key})`).to.equal(false);
  // The valid prompts were served as if alone: each answer streamed, in order.
  const streamed = warden.updates.slice(textsBefore).filter((entry) => entry.sessionId === run.liveSession && entry.update.sessionUpdate === 'agent_message_chunk')
    .map((entry) => (entry.update.content as { text?: string }).text ?? '').join('');
  let from = 0;
  for (const text of prompted) {
    const expected = text.length === 0 ? 'You sent an empty prompt.' : `You said: ${text}.`;
    const at = streamed.indexOf(expected, from);
    expect(at, `the answer to the prompt ${JSON.stringify(text)} was streamed`).to.be.at.least(0);
    from = at + expected.length;
  }
  void cancelledSession;
}

async function sendValid(run: Run, item: Extract<Input, { kind: 'valid' }>, pending: Pending[], prompted: string[], cancelled: (sessionId: string) => void): Promise<void> {
  const { warden, state } = run;
  const key = (id: string) => {
    usedKeys.add(JSON.stringify(id));
    return JSON.stringify(id);
  };
  const send = (id: string, method: string, params: unknown) => warden.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  run.valid += 1;
  run.linesSent += 1;
  const id = `v-${++counter}`;
  const prompt = [{ type: 'text', text: item.text }];
  if (!state.initialized) {
    // Out of order: lifecycle calls before initialize.
    const method = item.op === 'list' ? 'session/list' : item.op === 'newSession' ? 'session/new' : 'session/prompt';
    send(id, method, method === 'session/new' ? { cwd: run.cwd, mcpServers: [] } : { sessionId: 'never-created', prompt });
    pending.push({ key: key(id), codes: [-32600], method, what: `${method} before initialize` });
    return;
  }
  switch (item.op) {
    case 'prompt':
      send(id, 'session/prompt', { sessionId: run.liveSession, prompt });
      prompted.push(item.text);
      pending.push({ key: key(id), codes: 'result', method: 'session/prompt', what: 'a valid prompt', check: (answer) => expect((answer.result as { stopReason?: string }).stopReason).to.equal('end_turn') });
      return;
    case 'list':
      send(id, 'session/list', {});
      pending.push({
        key: key(id), codes: 'result', method: 'session/list', what: 'a valid session/list',
        check: (answer) => expect((answer.result as { sessions: Array<{ sessionId: string }> }).sessions.map((session) => session.sessionId)).to.include(run.liveSession),
      });
      return;
    case 'newSession': {
      // A second session, prompted once (while the live session's prompts may still run: the
      // demo agent serves sessions concurrently), then closed; a prompt after the close is refused -32002.
      const created = await warden.request(id, 'session/new', { cwd: run.cwd, mcpServers: [] });
      usedKeys.add(JSON.stringify(id));
      const sessionId = (created.result as { sessionId: string }).sessionId;
      expect(sessionId, `session/new answered ${JSON.stringify(created)}`).to.be.a('string');
      const first = `v-${++counter}`;
      const closeId = `v-${++counter}`;
      const after = `v-${++counter}`;
      send(first, 'session/prompt', { sessionId, prompt });
      send(closeId, 'session/close', { sessionId });
      pending.push({ key: key(first), codes: 'any', method: 'session/prompt', what: 'a prompt on a session closed meanwhile', check: (answer) => expect(['end_turn', 'cancelled']).to.include((answer.result as { stopReason?: string }).stopReason) });
      pending.push({ key: key(closeId), codes: 'result', method: 'session/close', what: 'session/close' });
      await warden.waitFor(() => warden.responses.has(JSON.stringify(closeId)), 'session/close');
      send(after, 'session/prompt', { sessionId, prompt });
      pending.push({ key: key(after), codes: [-32002], method: 'session/prompt', what: 'a prompt after session/close' });
      return;
    }
    case 'promptClosed':
      send(id, 'session/prompt', { sessionId: 'never-created', prompt });
      pending.push({ key: key(id), codes: [-32002], method: 'session/prompt', what: 'a prompt before session/new' });
      return;
    case 'cancelled': {
      // A prompt cancelled at once ends cancelled (or end_turn, if it finished first); the session goes on.
      // session/cancel also ends the prompts still running or queued: the valid ones before it finish first.
      await warden.waitFor(() => pending.filter((entry) => entry.what === 'a valid prompt').every((entry) => warden.responses.has(entry.key)), 'the valid prompts before a cancel');
      send(id, 'session/prompt', { sessionId: run.liveSession, prompt });
      warden.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: run.liveSession } })}\n`);
      cancelled(run.liveSession);
      pending.push({ key: key(id), codes: 'result', method: 'session/prompt', what: 'a cancelled prompt', check: (answer) => expect(['cancelled', 'end_turn']).to.include((answer.result as { stopReason?: string }).stopReason) });
      // Wait for it: a cancelled turn drops its stray updates until the next prompt, which would hide them.
      await warden.waitFor(() => warden.responses.has(JSON.stringify(id)), 'the cancelled prompt');
      return;
    }
  }
}

async function assertWithSeed(property: fc.IAsyncPropertyWithHooks<[Input[]]>, numRuns: number): Promise<void> {
  const details = await fc.check(property, { seed, numRuns, endOnFailure: !shrink });
  if (!details.failed) return;
  const error = details.errorInstance as Error | undefined;
  throw new Error(
    `acp stdin fuzz failed after ${details.numRuns} batches: FUZZ_SEED=${details.seed} (path ${details.counterexamplePath}); rerun with FUZZ_SEED=${details.seed}, FUZZ_SHRINK=1 to shrink\n`
    + `${error?.stack ?? String(error)}\ncounterexample (start): ${JSON.stringify(details.counterexample).slice(0, 3000)}`,
  );
}

describe('fuzz: warden acp stdin', function () {
  this.timeout(600_000);
  let run: Run | undefined;

  after(async () => {
    await run?.warden.kill();
  });

  it(`never dies, answers every request exactly once with the right code, serves the valid traffic (seed ${seed})`, async () => {
    const started = Date.now();
    const warden = launchFuzzWarden(['--env', 'DEMO_WORD_DELAY_MS=0']);
    run = { warden, state: { initialized: false, sessions: new Set() }, liveSession: '', expectedNull: 0, linesSent: 0, valid: 0, garbage: 0, cwd: process.cwd() };
    const current = run;
    // Before initialize: garbage and lifecycle calls out of order.
    await assertWithSeed(fc.asyncProperty(fc.array(input, { minLength: 50, maxLength: 90 }), (inputs) => runBatch(current, inputs)), preRuns);
    const initialized = await warden.request('init', 'initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'fuzz', version: '1' } });
    expect(initialized.result, JSON.stringify(initialized)).to.have.property('protocolVersion', 1);
    current.state.initialized = true;
    const created = await warden.request('first-session', 'session/new', { cwd: current.cwd, mcpServers: [] });
    current.liveSession = (created.result as { sessionId: string }).sessionId;
    current.state.sessions.add(current.liveSession);
    // After initialize: garbage interleaved with valid traffic.
    await assertWithSeed(fc.asyncProperty(fc.array(input, { minLength: 50, maxLength: 90 }), (inputs) => runBatch(current, inputs)), mainRuns);
    // Still there: a last valid prompt is served.
    const last = await warden.request('last', 'session/prompt', { sessionId: current.liveSession, prompt: [{ type: 'text', text: 'still there?' }] });
    expect(last.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(warden.alive()).to.equal(true);
    expect(warden.strayLines).to.deep.equal([]);
    expect(current.garbage, 'at least 10,000 generated or mutated lines (at the default run counts)').to.be.at.least(process.env.FUZZ_ACP_RUNS || process.env.FUZZ_ACP_PRE_RUNS ? 0 : 10_000);
    console.log(`      acp stdin fuzz: ${current.garbage} generated/mutated lines and ${current.valid} valid requests, ${warden.nullResponses.length} id-null errors, ${warden.responses.size} answered ids, ${Date.now() - started} ms`);
  });

  // Found by this fuzzer and fixed: a second `initialize` booted another agent process behind
  // the demo agent's passthrough, leaking it and losing the open sessions.
  it('a repeated initialize keeps the agent process and the open sessions (was a bug)', async () => {
    const warden = launchFuzzWarden(['--env', 'DEMO_WORD_DELAY_MS=0']);
    try {
      const init = { protocolVersion: 1, clientCapabilities: {} };
      await warden.request(1, 'initialize', init);
      const created = await warden.request(2, 'session/new', { cwd: process.cwd(), mcpServers: [] });
      const sessionId = (created.result as { sessionId: string }).sessionId;
      const { childrenOf } = await import('../support/processes.js');
      const before = childrenOf(warden.child.pid as number).length;
      await warden.request(3, 'initialize', init);
      expect(childrenOf(warden.child.pid as number).length, 'no new agent process').to.equal(before);
      const prompt = await warden.request(4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
      expect(prompt.result, JSON.stringify(prompt)).to.deep.equal({ stopReason: 'end_turn' });
    } finally {
      await warden.kill();
    }
  });
});
