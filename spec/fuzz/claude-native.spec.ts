/**
 * Fuzzing the Claude Code adapter's native input, in process: the session machine
 * (`claudeSessionMachine`) is driven as the adapter agent drives it (adapter.start,
 * port.started, the initialize answer, session.prompt), then fed the CLI's recorded
 * stream-json output (spec/fixtures/claude-stream-json-*.transcript.ndjson) interleaved with
 * generated and mutated native messages: random JSON, recorded messages with fields dropped,
 * retyped or replaced, deep nesting, huge numbers, lone surrogates, non-JSON lines, stray
 * permission answers and cancels.
 *
 * Properties: the machine never throws nor ends in error; it only emits the outputs a session
 * adapter may emit (known update kinds, permission requests only, `port.write`s that JSON can
 * encode); the prompt gets exactly one outcome (a stop reason, or an error) once a `result`
 * arrives; and a valid turn after the garbage still ends with its stop reason.
 *
 * The first property keeps native messages in the structure the CLI prints (objects and
 * arrays where it prints them; leaves vary freely); the second varies the structure too and
 * checks every update and permission request against the ACP schema (both found bugs in src,
 * fixed; see the comments below).
 *
 * Inputs per run: FUZZ_CLAUDE_RUNS turns (default 400) of 10 to 50 generated events spliced into a
 * recorded turn, then a valid turn: about 13,000 native messages. FUZZ_SEED replays a seed.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { parserOf } from '../../src/acp/schemas.js';
import { claudeSessionMachine } from '../../src/adapters/claude/adapter.js';
import type { SessionAdapterOutput } from '../../src/adapters/adapter.js';

const seed = Number(process.env.FUZZ_SEED ?? 20261130);
const numRuns = Number(process.env.FUZZ_CLAUDE_RUNS ?? 400);
const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));
const context = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'fuzz', version: '1' } };

interface TranscriptLine {
  readonly dir: 'in' | 'out';
  readonly msg: Record<string, unknown>;
}

const transcripts = readdirSync(fixtures)
  .filter((name) => name.startsWith('claude-stream-json-') && name.endsWith('.transcript.ndjson'))
  .sort()
  .map((name) => ({
    name,
    lines: readFileSync(`${fixtures}${name}`, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as TranscriptLine),
  }));
/** What the CLI printed, every transcript. */
const recorded = transcripts.flatMap((transcript) => transcript.lines.filter((line) => line.dir === 'out').map((line) => line.msg));
const initAnswer = recorded.find((message) => message.type === 'control_response' && (message.response as { request_id?: string }).request_id?.startsWith('init')) as Record<string, unknown>;
/** One turn per transcript: what the CLI printed up to and including its first result. */
const turns = transcripts.map((transcript) => {
  const out = transcript.lines.filter((line) => line.dir === 'out' && !(line.msg.type === 'control_response' && (line.msg.response as { request_id?: string }).request_id?.startsWith('init'))).map((line) => line.msg);
  const end = out.findIndex((message) => message.type === 'result');
  return { name: transcript.name, body: out.slice(0, end), result: out[end] as Record<string, unknown> };
}).filter((turn) => turn.result !== undefined);

const outputTypes = new Set(['acp.respond', 'acp.error', 'acp.update', 'acp.clientRequest', 'acp.notify', 'port.write', 'port.busy', 'adapter.resume', 'adapter.ready']);
const stopReasons = new Set(['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled']);
const sessionNotification = parserOf('SessionNotification');
const updateKinds = new Set(['agent_message_chunk', 'agent_thought_chunk', 'user_message_chunk', 'tool_call', 'tool_call_update', 'plan', 'available_commands_update', 'current_mode_update', 'config_option_update', 'session_info_update', 'usage_update', 'notice']);
const requestPermission = parserOf('RequestPermissionRequest');

// ---------------------------------------------------------------------------------------
// Generators of native garbage

/**
 * Replaces (or drops) the value at a path into a JSON value. With `leafOnly`, the path goes on
 * down to a primitive, so that objects and arrays keep their shape and only leaves change.
 */
function mutate(value: unknown, path: readonly number[], replacement: unknown, drop: boolean, leafOnly: boolean): unknown {
  const container = typeof value === 'object' && value !== null;
  if (!container || (path.length === 0 && !leafOnly)) return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0) return leafOnly ? value : replacement;
  const key = keys[((path[0] ?? 0) as number) % keys.length] as string;
  const child = (value as Record<string, unknown>)[key];
  const childIsLeaf = typeof child !== 'object' || child === null;
  const copy: Record<string, unknown> = Array.isArray(value) ? ([...value] as unknown as Record<string, unknown>) : { ...(value as Record<string, unknown>) };
  if (drop && (path.length <= 1) && !Array.isArray(value) && (!leafOnly || childIsLeaf)) delete copy[key];
  else copy[key] = mutate(child, path.slice(1), replacement, drop, leafOnly);
  return copy;
}

/** Primitive values: huge, tiny, negative zero, lone surrogates, empty, long, and any JSON type name the CLI uses. */
const leaf = fc.oneof(
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -0, 5e-324, '\ud800', '\udfff\ud800', '', 'x'.repeat(10_000), null, true, false, 0, -1),
  fc.string({ maxLength: 30 }),
  fc.double(),
  fc.constantFrom('result', 'system', 'assistant', 'user', 'stream_event', 'control_request', 'control_response', 'init', 'success', 'error', 'error_during_execution', 'can_use_tool', 'content_block_start', 'content_block_delta', 'text_delta', 'thinking_delta', 'tool_use', 'tool_result', 'text', 'thinking'),
);

const weird = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -0, 5e-324, '\ud800', '\udfff\ud800', '', 'x'.repeat(10_000), null, [], {}, true),
  fc.constantFrom('result', 'system', 'assistant', 'user', 'stream_event', 'control_request', 'control_response', 'control_cancel_request', 'init', 'success', 'error', 'error_during_execution', 'error_max_turns', 'can_use_tool', 'message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop', 'text_delta', 'input_json_delta', 'thinking_delta', 'tool_use', 'tool_result', 'text', 'thinking'),
  fc.integer({ min: 1, max: 60 }).map((depth) => JSON.parse(`${'['.repeat(depth * 50)}1${']'.repeat(depth * 50)}`) as unknown),
);

/** A recorded message mutated: `leafOnly` keeps its objects and arrays, changing only what is in them. */
const mutatedRecorded = (leafOnly: boolean) => fc.record({
  index: fc.nat({ max: recorded.length - 1 }),
  mutations: fc.array(fc.record({ path: fc.array(fc.nat({ max: 20 }), { minLength: 1, maxLength: 6 }), replacement: leafOnly ? leaf : weird, drop: fc.boolean() }), { minLength: 1, maxLength: 3 }),
}).map(({ index, mutations }) => mutations.reduce<unknown>((value, change) => mutate(value, change.path, change.replacement, change.drop, leafOnly), recorded[index]));

// BUG in src (found by this fuzzer, see the pending test at the end): a CLI line that is JSON
// but not an object (`null`, `42`, `"x"`, `[]`) makes the machine's guards throw (they read
// `message.type` unguarded), and the session machine ends in error. Top-level non-objects
// are left out of the generated native messages until that is fixed.
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The structure the machine relies on (the BUG below): an object; a `stream_event` has an
 * `event` object; `assistant` and `user` have a `message` object whose `content`, if any, is
 * an array of objects; a `control_response` has a `response` object. Leaves vary freely.
 */
function wellShaped(message: unknown): boolean {
  if (!isObject(message)) return false;
  const body = message.message;
  const content = isObject(body) ? body.content : undefined;
  switch (message.type) {
    case 'stream_event':
      return isObject(message.event);
    case 'assistant':
    case 'user':
      return isObject(body) && (content === undefined || (Array.isArray(content) && content.every(isObject)));
    case 'control_response':
      return isObject(message.response);
    default:
      return true;
  }
}

/** Events of garbage for the session machine; `leafOnly`: native messages keep their structure. */
const garbageOf = (leafOnly: boolean) => fc.oneof(
  { weight: 8, arbitrary: mutatedRecorded(leafOnly).filter(leafOnly ? wellShaped : isObject).map((message) => ({ type: 'native.message', message })) },
  { weight: 2, arbitrary: fc.constantFrom(...recorded).map((message) => ({ type: 'native.message', message })) },
  { weight: leafOnly ? 1 : 2, arbitrary: (leafOnly ? fc.record({ type: leaf, subtype: leaf, session_id: leaf, request_id: leaf }, { requiredKeys: [] }).filter(wellShaped) : weird.filter(isObject)).map((message) => ({ type: 'native.message', message })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((preview) => ({ type: 'native.nonJson', preview })) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('client.response', 'client.error'), key: fc.oneof(fc.string(), fc.constant('init_1')), result: weird, error: fc.record({ code: fc.integer(), message: fc.string() }) }) },
);

// ---------------------------------------------------------------------------------------
// Driving the machine

interface Drive {
  readonly outputs: SessionAdapterOutput[];
  readonly faults: unknown[];
  send(event: Record<string, unknown>): void;
  status(): string;
  stop(): void;
}

function drive(): Drive {
  const actor = createActor(claudeSessionMachine);
  const outputs: SessionAdapterOutput[] = [];
  const faults: unknown[] = [];
  actor.on('*', (output: SessionAdapterOutput) => outputs.push(output));
  actor.subscribe({ error: (error) => faults.push(error) });
  actor.start();
  return {
    outputs,
    faults,
    send(event) {
      try {
        actor.send(event as never);
      } catch (error) {
        faults.push(error);
      }
    },
    status: () => actor.getSnapshot().status,
    stop: () => actor.stop(),
  };
}

/** Answers the permission requests the machine made (allow or deny), so that a turn can go on. */
function answerPermissions(machine: Drive, from: number, allow: boolean): void {
  for (const output of machine.outputs.slice(from)) {
    if (output.type !== 'acp.clientRequest') continue;
    machine.send({ type: 'client.response', key: output.key, result: { outcome: { outcome: 'selected', optionId: allow ? 'allow' : 'reject' } } });
  }
}

let strictSchema = false;

function checkOutputs(outputs: readonly SessionAdapterOutput[], what: string): void {
  for (const output of outputs) {
    expect(outputTypes, `${what}: a known output type`).to.include(output.type);
    // Was a BUG (found by this fuzzer): mapping.ts copied the CLI's leaf values into ACP
    // updates unchecked (a numeric text_delta gave {"text":5e-324}; string token counts gave
    // usage_update {"used":"1300"}; 1e308 + 1e308 gave Infinity). It now takes strings as text
    // and finite counts only. The schema is checked in the strict test below.
    if (output.type === 'acp.update') {
      expect(updateKinds, `${what}: a known update kind`).to.include(output.update.sessionUpdate);
      if (strictSchema) {
        expect(() => sessionNotification({ sessionId: output.sessionId, update: output.update }), `${what}: an ACP-valid update ${JSON.stringify(output.update).slice(0, 300)}`).to.not.throw();
      }
    }
    if (output.type === 'acp.clientRequest') {
      expect(output.method, what).to.equal('session/request_permission');
      if (strictSchema) expect(() => requestPermission(output.params), `${what}: a valid permission request ${JSON.stringify(output.params).slice(0, 300)}`).to.not.throw();
    }
    if (output.type === 'port.write') expect(() => JSON.stringify(output.message), `${what}: a writable line`).to.not.throw();
  }
}

function noFaults(machine: Drive): void {
  if (machine.faults.length > 0) throw new Error(`the session machine failed: ${String((machine.faults[0] as Error)?.stack ?? machine.faults[0]).slice(0, 1500)}`);
}

function outcomesOf(outputs: readonly SessionAdapterOutput[], requestId: string) {
  return outputs.filter((output): output is Extract<SessionAdapterOutput, { type: 'acp.respond' | 'acp.error' }> => (output.type === 'acp.respond' || output.type === 'acp.error') && output.requestId === requestId);
}

interface Turn {
  readonly turn: number;
  readonly garbage: Array<Record<string, unknown>>;
  readonly positions: number[];
  readonly beforeInit: Array<Record<string, unknown>>;
  readonly cancel: boolean;
  readonly allow: boolean;
}

let messages = 0;

function runTurn(input: Turn): void {
  const machine = drive();
  try {
    const turn = turns[input.turn % turns.length] as (typeof turns)[number];
    machine.send({ type: 'adapter.start', requestId: 'start', sessionId: 'fuzz-session', params: { cwd: '/tmp', mcpServers: [] }, context });
    machine.send({ type: 'port.started', pid: 1, restarts: 0 });
    // Garbage during the handshake: a control_response for init_1 in it may complete the handshake early, as the CLI would.
    for (const event of input.beforeInit) machine.send(event);
    machine.send({ type: 'native.message', message: initAnswer });
    messages += input.beforeInit.length + 1;
    expect(outcomesOf(machine.outputs, "start"), `session/new answered once; faults ${String(machine.faults[0])}; before init: ${JSON.stringify(input.beforeInit).slice(0, 1500)}`).to.have.length(1);
    machine.send({ type: 'session.prompt', requestId: 'p1', method: 'session/prompt', params: { sessionId: 'fuzz-session', prompt: [{ type: 'text', text: 'hi' }] }, context });
    // The recorded turn with the garbage spliced in.
    const stream: Array<Record<string, unknown>> = turn.body.map((message) => ({ type: 'native.message', message }));
    input.garbage.forEach((event, index) => stream.splice(Math.min(stream.length, (input.positions[index] ?? 0) % (stream.length + 1)), 0, event));
    if (input.cancel) stream.splice(Math.floor(stream.length / 2), 0, { type: 'session.cancel', sessionId: 'fuzz-session', requestId: 'p1', context });
    for (const event of stream) {
      const before = machine.outputs.length;
      machine.send(event);
      answerPermissions(machine, before, input.allow);
      messages += 1;
    }
    machine.send({ type: 'native.message', message: turn.result });
    messages += 1;
    noFaults(machine);
    expect(machine.status(), 'the machine is still running').to.equal('active');
    checkOutputs(machine.outputs, turn.name);
    const outcomes = outcomesOf(machine.outputs, 'p1');
    expect(outcomes, `exactly one outcome of the prompt (${turn.name})`).to.have.length(1);
    const outcome = outcomes[0] as (typeof outcomes)[number];
    if (outcome.type === 'acp.respond') expect(stopReasons, 'a stop reason').to.include((outcome.result as { stopReason?: string }).stopReason);
    // After the garbage, a valid turn still ends with its stop reason.
    const hello = turns.find((entry) => entry.name.includes('hello')) as (typeof turns)[number];
    machine.send({ type: 'session.prompt', requestId: 'p2', method: 'session/prompt', params: { sessionId: 'fuzz-session', prompt: [{ type: 'text', text: 'hi' }] }, context });
    for (const message of hello.body) machine.send({ type: 'native.message', message });
    machine.send({ type: 'native.message', message: hello.result });
    messages += hello.body.length + 1;
    noFaults(machine);
    checkOutputs(machine.outputs, 'the turn after');
    const after = outcomesOf(machine.outputs, 'p2');
    expect(after, 'exactly one outcome of the next prompt').to.have.length(1);
    expect(after[0]?.type === 'acp.respond' ? (after[0].result as { stopReason?: string }).stopReason : after[0]).to.equal('end_turn');
  } finally {
    machine.stop();
  }
}

/** Runs the property; throws with the seed and the counterexample when it fails. */
function fuzz(leafOnly: boolean, runs: number): void {
  const started = Date.now();
  messages = 0;
  const garbage = garbageOf(leafOnly);
  const property = fc.property(
    fc.record({
      turn: fc.nat({ max: turns.length - 1 }),
      garbage: fc.array(garbage, { minLength: 10, maxLength: 50 }),
      positions: fc.array(fc.nat({ max: 100 }), { minLength: 50, maxLength: 50 }),
      beforeInit: fc.array(garbage, { maxLength: 3 }),
      cancel: fc.boolean(),
      allow: fc.boolean(),
    }) as fc.Arbitrary<Turn>,
    (input) => runTurn(input),
  );
  const details = fc.check(property, { seed, numRuns: runs });
  if (details.failed) {
    const error = details.errorInstance as Error | undefined;
    throw new Error(`claude native fuzz failed: FUZZ_SEED=${details.seed} (path ${details.counterexamplePath}), shrunk ${details.numShrinks} times\n${error?.stack ?? String(error)}\ncounterexample: ${JSON.stringify(details.counterexample).slice(0, 4000)}`);
  }
  console.log(`      claude native fuzz: ${messages} native messages in ${runs} turns, ${Date.now() - started} ms`);
}

describe('fuzz: the Claude Code session machine on native input', function () {
  this.timeout(120_000);

  it(`never throws nor errors, emits only known outputs, ends every turn with one outcome (seed ${seed})`, () => {
    // Leaves mutated freely; objects and arrays where the CLI prints them (structure: below).
    fuzz(true, numRuns);
  });

  // Was a BUG, both halves fixed: a native message whose structure differs from what the CLI
  // prints made mapping.ts updatesOf() throw and the session machine end in error
  // ({"type":"stream_event"} with no "event", {"type":"assistant","message":{"content":5}});
  // leaf values of the wrong type were copied unchecked into updates the ACP schema rejects
  // (text 5e-324, string token counts, a tool_use_id that is an array in can_use_tool).
  it('native messages of the wrong structure or leaf types neither break the machine nor make invalid ACP updates (was a bug)', () => {
    strictSchema = true;
    try {
      fuzz(false, numRuns);
    } finally {
      strictSchema = false;
    }
  });

  // Was a BUG, fixed (asMessage reads a non-object as {}; the adapter agent passes such lines
  // as noise): src/adapters/claude/adapter.ts guards `isResult`, `isInitResponse`,
  // `conversationMissing` (and `isControlResponse`) read `message.type` of whatever JSON line
  // the CLI printed; a line `null` throws "Cannot read properties of null (reading 'type')",
  // and the session machine ends in error (the port passes every JSON value as
  // `native.message`, src/adapters/adapter-agent.ts). Expected: ignored like a non-JSON line.
  it('a CLI line that is JSON but not an object (null, 42, [], "x") is ignored (was a bug)', () => {
    for (const message of [null, 42, [], 'x']) {
      for (const stage of ['waitingForCli', 'initializing', 'prompting']) {
        const machine = drive();
        machine.send({ type: 'adapter.start', requestId: 'start', sessionId: 'fuzz-session', params: { cwd: '/tmp', mcpServers: [] }, context });
        if (stage !== 'waitingForCli') machine.send({ type: 'port.started', pid: 1, restarts: 0 });
        if (stage === 'prompting') {
          machine.send({ type: 'native.message', message: initAnswer });
          machine.send({ type: 'session.prompt', requestId: 'p1', method: 'session/prompt', params: { sessionId: 'fuzz-session', prompt: [{ type: 'text', text: 'hi' }] }, context });
        }
        machine.send({ type: 'native.message', message });
        expect(machine.faults.map(String), `${JSON.stringify(message)} while ${stage}`).to.deep.equal([]);
        expect(machine.status(), `${JSON.stringify(message)} while ${stage}`).to.equal('active');
        machine.stop();
      }
    }
  });
});
