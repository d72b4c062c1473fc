import { expect } from 'chai';
import fc from 'fast-check';
import { fileURLToPath } from 'node:url';
import { createActor, SimulatedClock, type AnyActorRef } from 'xstate';
import {
  cancelRequest,
  closeConnection,
  connectionLogic,
  connectionStats,
  createMemoryTransportPair,
  maxParamsDepth,
  pendingRequests,
  portTransport,
  respond,
  respondError,
  RpcError,
  sendNotification,
  sendRequest,
  requestTag,
  tagRequest,
  taggedRequests,
  type ConnectionEmitted,
  type ConnectionInput,
  type MemoryTransport,
  type Transport,
} from '../../src/jsonrpc/index.js';
import { portLogic } from '../../src/port/index.js';
import { spawnedPid } from '../support/port-pid.js';
import { expectGroupGone } from '../support/processes.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));

/** Lets queued microtasks (in-memory delivery) run. */
const settleMicrotasks = () => new Promise((resolve) => setImmediate(resolve));

function connect(transport: Transport, extra: Partial<ConnectionInput> = {}, clock?: SimulatedClock) {
  const actor = createActor(connectionLogic, { input: { transport, ...extra }, ...(clock ? { clock } : {}) });
  const events: ConnectionEmitted[] = [];
  actor.on('*', (event: ConnectionEmitted) => events.push(event));
  actor.start();
  return { actor, events };
}

/** A connection on one side, and the raw other end to play a (mis)behaving peer. */
function withRawPeer(extra: Partial<ConnectionInput> = {}, clock?: SimulatedClock) {
  const [ours, theirs] = createMemoryTransportPair();
  const received: Array<Record<string, unknown>> = [];
  theirs.start({ message: (value) => received.push(value as Record<string, unknown>), malformed: () => {}, closed: () => {} });
  const side = connect(ours, extra, clock);
  return { ...side, peer: theirs as MemoryTransport, received };
}

describe('jsonrpc connection', () => {
  describe('input ended (the peer half-closed)', () => {
    it('stays open for what it owes: the peer\'s request is still answered; requests to the peer fail input_ended, pending and later, unwritten', async () => {
      const { actor, events, peer, received } = withRawPeer();
      const pending = sendRequest(actor, 'session/request_permission', { n: 1 }).then(() => undefined, (error: RpcError) => error);
      peer.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'session/prompt', params: {} }));
      peer.endInput();
      await settleMicrotasks();
      await settleMicrotasks();
      expect(events.map((event) => event.type)).to.include.members(['rpc.request', 'rpc.inputEnded']);
      expect(actor.getSnapshot().value).to.equal('open');
      const failed = await pending;
      expect(failed).to.be.instanceOf(RpcError);
      expect({ code: failed?.code, reason: (failed?.data as { reason?: string }).reason }).to.deep.equal({ code: -32603, reason: 'input_ended' });
      const later = await sendRequest(actor, 'fs/read_text_file', {}).then(() => undefined, (error: RpcError) => error);
      expect((later?.data as { reason?: string }).reason).to.equal('input_ended');
      expect(respond(actor, 7, { stopReason: 'end_turn' })).to.deep.equal({ ok: true });
      await settleMicrotasks();
      // The one request written before EOF, and the answer: nothing was written for the later one.
      expect(received.map((message) => message.method ?? message.result)).to.deep.equal(['session/request_permission', { stopReason: 'end_turn' }]);
      expect(connectionStats(actor)).to.include({ pending: 0, incoming: 0 });
    });
  });

  describe('requests both ways', () => {
    it('answers requests in both directions, each exactly once, with deferred responses', async () => {
      const [a, b] = createMemoryTransportPair();
      const client = connect(a);
      const agent = connect(b);
      const deferred: Array<{ id: string | number; params: unknown }> = [];
      agent.actor.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => deferred.push({ id: event.id, params: event.params }));
      client.actor.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => respond(client.actor, event.id, { fromClient: event.method }));
      const first = sendRequest(client.actor, 'session/prompt', { n: 1 });
      const second = sendRequest(client.actor, 'session/prompt', { n: 2 });
      await settleMicrotasks();
      expect(deferred.map((entry) => entry.params)).to.deep.equal([{ n: 1 }, { n: 2 }]);
      // The agent asks the client something while the prompts are pending.
      expect(await sendRequest(agent.actor, 'session/request_permission', {})).to.deep.equal({ fromClient: 'session/request_permission' });
      respond(agent.actor, deferred[1]?.id as number, { stopReason: 'end_turn', n: 2 });
      respond(agent.actor, deferred[0]?.id as number, { stopReason: 'end_turn', n: 1 });
      expect(await first).to.deep.equal({ stopReason: 'end_turn', n: 1 });
      expect(await second).to.deep.equal({ stopReason: 'end_turn', n: 2 });
      expect(respond(agent.actor, deferred[0]?.id as number, {})).to.deep.equal({ ok: false, reason: 'unknown_request' });
    });

    it('keeps its owner\'s tag on each request owed an answer, in the order they came, until it is answered; an id reused after its answer starts untagged', async () => {
      const { actor, peer } = withRawPeer();
      const asked: Array<string | number> = [];
      actor.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => asked.push(event.id));
      peer.sendRaw('{"jsonrpc":"2.0","id":1,"method":"a"}');
      peer.sendRaw('{"jsonrpc":"2.0","id":"1","method":"b"}');
      peer.sendRaw('{"jsonrpc":"2.0","id":3,"method":"c"}');
      await settleMicrotasks();
      expect(asked).to.deep.equal([1, '1', 3]);
      expect(tagRequest(actor, 3, { key: 'r3' })).to.equal(true);
      expect(tagRequest(actor, 1, { key: 'r1' })).to.equal(true);
      expect(tagRequest(actor, 'nope', { key: 'x' })).to.equal(false);
      // A number and a string id are two requests; the untagged one is not listed.
      expect(requestTag(actor, '1')).to.equal(undefined);
      expect([...taggedRequests(actor)]).to.deep.equal([{ id: 1, method: 'a', tag: { key: 'r1' } }, { id: 3, method: 'c', tag: { key: 'r3' } }]);
      respond(actor, 1, {});
      expect(requestTag(actor, 1)).to.equal(undefined);
      expect([...taggedRequests(actor)].map((request) => request.id)).to.deep.equal([3]);
      peer.sendRaw('{"jsonrpc":"2.0","id":1,"method":"a"}');
      await settleMicrotasks();
      expect(requestTag(actor, 1)).to.equal(undefined);
      // Answering while walking them is safe.
      for (const request of taggedRequests(actor)) respond(actor, request.id, {});
      expect([...taggedRequests(actor)]).to.deep.equal([]);
      actor.stop();
    });

    it('makes every outgoing request a child actor that ends in its outcome', async () => {
      const [a, b] = createMemoryTransportPair();
      const seen: Array<{ parent: string | undefined; id: string }> = [];
      const actor = createActor(connectionLogic, {
        input: { transport: a },
        inspect: (event) => {
          const ref = event.actorRef as AnyActorRef & { _parent?: AnyActorRef };
          if (event.type === '@xstate.actor' && ref.id.startsWith('request-')) seen.push({ parent: ref._parent?.sessionId, id: ref.id });
        },
      }).start();
      const agent = connect(b);
      agent.actor.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => respondError(agent.actor, event.id, RpcError.invalidParams('no')));
      const error = await sendRequest(actor, 'x').catch((caught: unknown) => caught);
      expect(error).to.be.instanceOf(RpcError).and.include({ code: -32602, failure: 'error_response' });
      expect(seen).to.deep.equal([{ parent: actor.sessionId, id: 'request-1' }]);
    });
  });

  describe('malformed input', () => {
    const cases: Array<[string, string, { code: number; id: unknown }]> = [
      ['a line that is not JSON', 'this is not json', { code: -32700, id: null }],
      ['a batch', '[{"jsonrpc":"2.0","id":1,"method":"a"}]', { code: -32600, id: null }],
      ['a scalar', '42', { code: -32600, id: null }],
      ['a missing jsonrpc version', '{"id":7,"method":"a"}', { code: -32600, id: 7 }],
      ['a method that is not a string', '{"jsonrpc":"2.0","id":8,"method":5}', { code: -32600, id: 8 }],
      ['params that are a string', '{"jsonrpc":"2.0","id":9,"method":"a","params":"x"}', { code: -32600, id: 9 }],
      ['an id that is an object', '{"jsonrpc":"2.0","id":{},"method":"a"}', { code: -32600, id: null }],
      ['an unknown method', '{"jsonrpc":"2.0","id":10,"method":"nope"}', { code: -32601, id: 10 }],
      ['params its parser rejects', '{"jsonrpc":"2.0","id":11,"method":"strict","params":{"n":"x"}}', { code: -32602, id: 11 }],
    ];
    for (const [name, line, expected] of cases) {
      it(`answers ${name} with ${expected.code} and keeps serving`, async () => {
        const { actor, peer, received } = withRawPeer({
          methods: {
            requests: {
              ping: true,
              strict: (params) => {
                if (typeof (params as { n?: unknown }).n !== 'number') throw new Error('n must be a number');
                return params;
              },
            },
          },
        });
        actor.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => respond(actor, event.id, 'pong'));
        peer.sendRaw(line);
        peer.sendRaw('{"jsonrpc":"2.0","id":"after","method":"ping"}');
        await settleMicrotasks();
        expect(received[0]).to.deep.include({ jsonrpc: '2.0', id: expected.id });
        expect((received[0]?.error as { code: number }).code).to.equal(expected.code);
        expect(received[1]).to.deep.equal({ jsonrpc: '2.0', id: 'after', result: 'pong' });
        expect(actor.getSnapshot().status).to.equal('active');
      });
    }

    // Issue 28, defect 9: what is that deep overflowed the stack of whatever recursed over it.
    it('refuses params, results and errors nested deeper than maxParamsDepth (a request -32602 by its id, an awaited answer fails its request, a notification is dropped); the limit itself passes', async () => {
      const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
      const { actor, peer, received, events } = withRawPeer();
      const asked = sendRequest(actor, 'session/new').then(() => undefined, (error: unknown) => error);
      const failed = sendRequest(actor, 'session/load').then(() => undefined, (error: unknown) => error);
      await settleMicrotasks();
      peer.sendRaw(`{"jsonrpc":"2.0","id":"deep","method":"session/prompt","params":{"a":${nested(20_000)}}}`);
      peer.sendRaw(`{"jsonrpc":"2.0","method":"session/update","params":${nested(maxParamsDepth + 1)}}`);
      peer.sendRaw(`{"jsonrpc":"2.0","id":1,"result":{"a":${nested(20_000)}}}`);
      peer.sendRaw(`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no","data":${nested(maxParamsDepth)}}}`);
      peer.sendRaw(`{"jsonrpc":"2.0","id":"at","method":"session/prompt","params":${nested(maxParamsDepth)}}`);
      await settleMicrotasks();
      const answers = received.filter((message) => !('method' in message));
      expect(answers).to.have.length(1);
      expect(answers[0]).to.deep.include({ id: 'deep' });
      const refusal = answers[0]?.error as { code: number; message: string; data: unknown };
      expect(refusal.code).to.equal(-32602);
      expect(refusal.message).to.equal(`Invalid params: session/prompt: the params are nested deeper than ${maxParamsDepth} levels of objects and arrays, the limit of every message, so it was refused unread; send flatter JSON`);
      expect(refusal.data).to.deep.equal({ reason: 'too_deep', maxDepth: maxParamsDepth, method: 'session/prompt' });
      for (const [error, method] of [[await asked, 'session/new'], [await failed, 'session/load']] as const) {
        expect(error).to.be.instanceOf(RpcError);
        expect((error as RpcError).code).to.equal(-32603);
        expect((error as RpcError).failure).to.equal('local');
        expect((error as RpcError).data).to.deep.equal({ reason: 'too_deep', maxDepth: maxParamsDepth, method });
      }
      expect(events.filter((event) => event.type === 'rpc.dropped')).to.deep.equal([
        { type: 'rpc.dropped', reason: 'too_deep', detail: `session/update: its params are nested deeper than ${maxParamsDepth} levels of objects and arrays, the limit of every message, so it was refused unread` },
      ]);
      expect(events.filter((event) => event.type === 'rpc.request').map((event) => (event as { id: unknown }).id)).to.deep.equal(['at']);
      expect(connectionStats(actor)).to.deep.equal({ pending: 0, incoming: 1, malformed: 0 });
    });

    it('refuses another request under an id still in use with -32600 and id null (an answer with the id would settle the first request, which still runs)', async () => {
      const { actor, peer, received } = withRawPeer();
      const requests: unknown[] = [];
      actor.on('rpc.request', (event: ConnectionEmitted) => requests.push(event));
      peer.sendRaw('{"jsonrpc":"2.0","id":1,"method":"a"}');
      peer.sendRaw('{"jsonrpc":"2.0","id":1,"method":"b"}');
      peer.sendRaw('{"jsonrpc":"2.0","id":1,"method":"a","params":{"other":true}}');
      await settleMicrotasks();
      expect(requests).to.have.length(1);
      expect(received).to.have.length(2);
      for (const answer of received) {
        expect(answer.id).to.equal(null);
        expect(answer.error).to.deep.include({ code: -32600, data: { id: 1 } });
      }
    });

    it('drops a second copy of a request still being answered (same id, method and params: a duplicated message), reporting it; the first copy is answered once', async () => {
      const { actor, peer, received, events } = withRawPeer();
      const requests: Array<{ id: unknown }> = [];
      actor.on('rpc.request', (event: ConnectionEmitted) => requests.push(event as unknown as { id: unknown }));
      peer.sendRaw('{"jsonrpc":"2.0","id":7,"method":"a","params":{"x":[1,2]}}');
      peer.sendRaw('{"jsonrpc":"2.0","id":7,"method":"a","params":{"x":[1,2]}}');
      await settleMicrotasks();
      expect(requests.map((request) => request.id)).to.deep.equal([7]);
      expect(received).to.deep.equal([]);
      expect(events.filter((event) => event.type === 'rpc.dropped').map((event) => (event as { reason: string }).reason)).to.deep.equal(['duplicate_request']);
      expect(respond(actor, 7, 'done')).to.deep.equal({ ok: true });
      await settleMicrotasks();
      expect(received.map((answer) => [answer.id, answer.result])).to.deep.equal([[7, 'done']]);
    });

    it('drops unmatched and duplicate responses and unknown notifications, reporting them', async () => {
      const { actor, peer, events } = withRawPeer({ methods: { notifications: { known: true } } });
      const answered = sendRequest(actor, 'a');
      await settleMicrotasks();
      peer.sendRaw('{"jsonrpc":"2.0","id":1,"result":"first"}');
      peer.sendRaw('{"jsonrpc":"2.0","id":1,"result":"duplicate"}');
      peer.sendRaw('{"jsonrpc":"2.0","id":99,"result":"stray"}');
      peer.sendRaw('{"jsonrpc":"2.0","method":"unknown/notification"}');
      peer.sendRaw('{"jsonrpc":"2.0","method":"known","params":{}}');
      await settleMicrotasks();
      expect(await answered).to.equal('first');
      expect(events.filter((event) => event.type === 'rpc.dropped').map((event) => (event as { reason: string }).reason))
        .to.deep.equal(['unmatched_response', 'unmatched_response', 'unknown_notification']);
      expect(events.filter((event) => event.type === 'rpc.notification')).to.have.length(1);
      peer.sendRaw('not json');
      await settleMicrotasks();
      expect(connectionStats(actor)).to.deep.equal({ pending: 0, incoming: 0, malformed: 1 });
    });
  });

  describe('deadlines and cancellation', () => {
    it('times a request out after its method deadline, as -32800, and drops the late answer quietly', async () => {
      const clock = new SimulatedClock();
      const { actor, peer, events } = withRawPeer({ timeouts: { methods: { initialize: 1000 } } }, clock);
      const result = sendRequest(actor, 'initialize').catch((error: unknown) => error);
      const prompt = sendRequest(actor, 'session/prompt');
      clock.increment(999);
      expect(pendingRequests(actor).map((entry) => entry.method)).to.deep.equal(['initialize', 'session/prompt']);
      clock.increment(1);
      const error = (await result) as RpcError;
      expect(error).to.be.instanceOf(RpcError).and.include({ code: -32800, failure: 'timed_out' });
      expect(error.data).to.deep.include({ reason: 'timeout', timeoutMs: 1000 });
      peer.sendRaw('{"jsonrpc":"2.0","id":1,"result":"late"}');
      peer.sendRaw('{"jsonrpc":"2.0","id":2,"result":"prompt done"}');
      await settleMicrotasks();
      expect(await prompt).to.equal('prompt done'); // no deadline by default: prompts are long
      expect(events.some((event) => event.type === 'rpc.dropped')).to.equal(false);
    });

    it('an idle deadline is extended by any message from the peer', async () => {
      const clock = new SimulatedClock();
      const { actor, peer } = withRawPeer({ timeouts: { methods: { 'session/prompt': { idleMs: 1000 } } } }, clock);
      let outcome: unknown = 'pending';
      sendRequest(actor, 'session/prompt').then((value) => (outcome = value), (error: RpcError) => (outcome = error.failure));
      for (let step = 0; step < 5; step++) {
        clock.increment(800);
        peer.sendRaw('{"jsonrpc":"2.0","method":"session/update","params":{}}');
        await settleMicrotasks();
      }
      expect(outcome).to.equal('pending');
      clock.increment(1000);
      await settleMicrotasks();
      expect(outcome).to.equal('timed_out');
    });

    it('cancelling sends $/cancel_request and rejects at once with -32800', async () => {
      const { actor, received } = withRawPeer();
      const controller = new AbortController();
      const result = sendRequest(actor, 'terminal/create', {}, { signal: controller.signal }).catch((error: unknown) => error);
      controller.abort();
      expect(await result).to.be.instanceOf(RpcError).and.include({ code: -32800, failure: 'cancelled' });
      await settleMicrotasks();
      expect(received.map((message) => message.method)).to.deep.equal(['terminal/create', '$/cancel_request']);
      expect(received[1]?.params).to.deep.equal({ requestId: 1 });
      expect(cancelRequest(actor, 1)).to.equal(false);
    });

    it('tells the owner when the peer cancels one of its requests', async () => {
      const { actor, peer, events } = withRawPeer();
      peer.sendRaw('{"jsonrpc":"2.0","id":5,"method":"session/prompt"}');
      peer.sendRaw('{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}');
      peer.sendRaw('{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":6}}');
      await settleMicrotasks();
      expect(events.filter((event) => event.type === 'rpc.cancelRequested')).to.deep.equal([{ type: 'rpc.cancelRequested', id: 5 }]);
      expect(respondError(actor, 5, RpcError.requestCancelled())).to.deep.equal({ ok: true });
    });
  });

  describe('peer lost', () => {
    it('settles every pending request at once with peer_lost, and refuses new ones', async () => {
      const { actor, peer, events } = withRawPeer();
      const results = [sendRequest(actor, 'a'), sendRequest(actor, 'b'), sendRequest(actor, 'c')].map((promise) => promise.catch((error: unknown) => error));
      peer.close();
      const errors = (await Promise.all(results)) as RpcError[];
      expect(errors.map((error) => error.failure)).to.deep.equal(['peer_lost', 'peer_lost', 'peer_lost']);
      expect(actor.getSnapshot()).to.deep.include({ status: 'done', value: 'closed' });
      expect(events.at(-1)?.type).to.equal('rpc.closed');
      const late = await sendRequest(actor, 'd').catch((error: unknown) => error);
      expect(late).to.include({ failure: 'local' });
      expect(respond(actor, 1, {})).to.deep.equal({ ok: false, reason: 'closed' });
    });

    it('over a port: kill -9 of the agent settles pending requests with its exit', async () => {
      const port = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli] } });
      port.subscribe({ error: () => {} }); // its crash is the point of the test
      port.start();
      const pid = await spawnedPid(port);
      try {
        const { actor } = connect(portTransport(port));
        expect(await sendRequest(actor, 'echo', { hello: 'agent' })).to.deep.equal({ hello: 'agent' });
        const hanging = sendRequest(actor, 'hang').catch((error: unknown) => error);
        // The CLI answers in the order it reads: an echo answered after it means 'hang' is in, pending.
        expect(await sendRequest(actor, 'echo', { after: 'hang' })).to.deep.equal({ after: 'hang' });
        process.kill(pid, 'SIGKILL');
        const error = (await hanging) as RpcError;
        expect(error.failure).to.equal('peer_lost');
        expect((error.data as { exit: { reason: unknown } }).exit.reason).to.deep.equal({ kind: 'signaled', signal: 'SIGKILL' });
      } finally {
        if (port.getSnapshot().status === 'active') port.stop();
        await expectGroupGone(pid);
      }
    });

    it('closing it from our side settles pending requests too', async () => {
      const { actor } = withRawPeer();
      const pending = sendRequest(actor, 'a').catch((error: unknown) => error);
      closeConnection(actor);
      expect(await pending).to.include({ failure: 'peer_lost' });
    });
  });

  describe('properties', () => {
    it('any mix of valid requests and garbage: the connection lives, every request is answered once, to the right id', async () => {
      const garbage = fc.oneof(
        fc.string({ maxLength: 40 }).filter((text) => !text.includes('\n')),
        fc.constantFrom('[]', '[1]', 'null', '{}', '{"jsonrpc":"1.0","id":1,"method":"x"}', '{"jsonrpc":"2.0","id":null}', '{"jsonrpc":"2.0","method":7}', '{"jsonrpc":"2.0","id":1e400,"method":"x"}'),
        fc.json().filter((text) => !text.includes('\n')),
      );
      const step = fc.oneof(fc.record({ kind: fc.constant('request' as const), value: fc.jsonValue() }), fc.record({ kind: fc.constant('garbage' as const), line: garbage }));
      await fc.assert(
        fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
          const { actor, peer, received } = withRawPeer();
          actor.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => respond(actor, event.id, { echo: event.params }));
          const sent: string[] = [];
          steps.forEach((entry, index) => {
            if (entry.kind === 'request') {
              const id = `req-${index}`;
              sent.push(id);
              peer.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, method: 'echo', params: { value: entry.value } }));
            } else {
              peer.sendRaw(entry.line);
            }
          });
          await settleMicrotasks();
          expect(actor.getSnapshot().status).to.equal('active');
          const answers = received.filter((message) => typeof message.id === 'string' && (message.id as string).startsWith('req-'));
          expect(answers.map((message) => message.id)).to.deep.equal(sent);
          for (const answer of answers) {
            const index = Number((answer.id as string).slice(4));
            const step0 = steps[index] as { value: unknown };
            expect(answer.result).to.deep.equal({ echo: { value: JSON.parse(JSON.stringify(step0.value)) } });
          }
          actor.stop();
        }),
        { numRuns: 200 },
      );
    });

    it('every outgoing request settles exactly once, whatever happens: answers, errors, timeouts, cancels, loss', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.constantFrom('answer', 'error', 'cancel', 'tick', 'duplicate'), { minLength: 1, maxLength: 25 }), fc.boolean(), async (actions, loseAtEnd) => {
          const clock = new SimulatedClock();
          const settleEvents = new Map<string, number>();
          const [ours, theirs] = createMemoryTransportPair();
          const received: Array<Record<string, unknown>> = [];
          theirs.start({ message: (value) => received.push(value as Record<string, unknown>), malformed: () => {}, closed: () => {} });
          const peer = theirs as MemoryTransport;
          const actor = createActor(connectionLogic, {
            input: { transport: ours, timeouts: { default: 500 } },
            clock,
            // Counts what the connection itself does: a request actor settled twice would show here.
            inspect: (event) => {
              if (event.type === '@xstate.event' && (event.event as { type: string }).type === 'request.settle') {
                const id = (event.actorRef as AnyActorRef).id;
                settleEvents.set(id, (settleEvents.get(id) ?? 0) + 1);
              }
            },
          }).start();
          const settled = new Map<number, number>();
          const ids: number[] = [];
          for (const action of actions) {
            const id = ids.length + 1;
            ids.push(id);
            sendRequest(actor, 'm').then(() => settled.set(id, (settled.get(id) ?? 0) + 1), () => settled.set(id, (settled.get(id) ?? 0) + 1));
            await settleMicrotasks();
            if (action === 'answer') peer.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, result: id }));
            if (action === 'error') peer.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -1, message: 'no' } }));
            if (action === 'duplicate') {
              peer.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, result: 1 }));
              peer.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, result: 2 }));
            }
            if (action === 'cancel') cancelRequest(actor, id);
            if (action === 'tick') clock.increment(300);
            await settleMicrotasks();
          }
          if (loseAtEnd) peer.close();
          else clock.increment(1000);
          await settleMicrotasks();
          expect(received.filter((message) => message.method === 'm')).to.have.length(ids.length);
          for (const id of ids) {
            expect(settled.get(id), `request ${id} settled`).to.equal(1);
            expect(settleEvents.get(`request-${id}`), `request ${id} settle events`).to.equal(1);
          }
          expect(pendingRequests(actor)).to.have.length(0);
        }),
        { numRuns: 150 },
      );
    });
  });

  it('a message JSON cannot encode: the request rejects locally, nothing is left pending, and an answer still goes out', async () => {
    const { actor, peer, received } = withRawPeer();
    const error = await sendRequest(actor, 'a', { big: 10n }).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(RpcError).and.include({ failure: 'local' });
    expect(connectionStats(actor).pending).to.equal(0);
    actor.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => respond(actor, event.id, { big: 10n }));
    peer.sendRaw('{"jsonrpc":"2.0","id":"q","method":"b"}');
    await settleMicrotasks();
    expect(received.find((message) => message.id === 'q')).to.deep.include({ error: { code: -32603, message: 'Internal error: the result could not be written as JSON', data: { method: 'b' } } });
  });

  it('closing from our side answers the requests the peer still waits for', async () => {
    const { actor, peer, received } = withRawPeer();
    peer.sendRaw('{"jsonrpc":"2.0","id":"p","method":"session/prompt"}');
    await settleMicrotasks();
    closeConnection(actor);
    await settleMicrotasks();
    expect(received).to.have.length(1);
    expect(received[0]).to.deep.include({ id: 'p' });
    expect((received[0]?.error as { data: { reason: string } }).data.reason).to.equal('shutdown');
  });

  it('notifications go out and come in, in order', async () => {
    const [a, b] = createMemoryTransportPair();
    const sender = connect(a);
    const receiver = connect(b);
    for (let index = 0; index < 5; index++) sendNotification(sender.actor, 'session/update', { index });
    await settleMicrotasks();
    expect(receiver.events.map((event) => (event as { params: { index: number } }).params.index)).to.deep.equal([0, 1, 2, 3, 4]);
  });
});
