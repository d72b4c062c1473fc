/**
 * Codex refusing a `turn/start` (an error answer, the app-server's form as recorded for a bad
 * `thread/list` cursor: `{"error":{"code":-32600,"message":...},"id":N}`): no turn runs, so no
 * `turn/completed` follows. The prompt fails naming the refusal, and the session is ready for
 * the next prompt (it once stayed `prompting` with no prompt, and dropped every later prompt).
 * Driven with the recorded hello transcript's lines, no process.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import type { SessionAdapterOutput } from '../../src/adapters/adapter.js';
import { codexSessionMachine } from '../../src/adapters/codex/adapter.js';
import { eventContext } from './native-driver.js';

const fixture = fileURLToPath(new URL('../fixtures/codex-app-server-hello.ndjson', import.meta.url));
const recorded = readFileSync(fixture, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { dir: string; msg: { id?: number; method?: string } });

describe('Codex refusing a turn', () => {
  it('the prompt fails naming the refusal, and the next prompt starts a turn', () => {
    const actor = createActor(codexSessionMachine).start();
    const outputs: SessionAdapterOutput[] = [];
    actor.on('*', (output: SessionAdapterOutput) => outputs.push(output));
    const written = () => outputs.filter((output) => output.type === 'port.write').map((output) => output.message as { id?: number; method?: string });
    const lastRequest = () => written().filter((request) => request.id !== undefined && request.method !== undefined).at(-1);
    const prompt = (requestId: string) => actor.send({ type: 'session.prompt', requestId, method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'hello' }] }, context: eventContext });

    actor.send({ type: 'adapter.start', requestId: 'new', sessionId: 's1', params: { cwd: '/tmp', mcpServers: [] }, context: eventContext });
    actor.send({ type: 'port.started', pid: 1, restarts: 0 });
    // The handshake: the recorded answers to initialize and thread/start, with the ids the session wrote.
    for (const line of recorded) {
      if (line.dir !== 'recv' || line.msg.method !== undefined || line.msg.id === undefined) continue;
      if (actor.getSnapshot().value === 'ready') break;
      actor.send({ type: 'native.message', message: { ...line.msg, id: lastRequest()?.id } });
    }
    expect(actor.getSnapshot().value).to.equal('ready');

    prompt('p1');
    expect(lastRequest()?.method).to.equal('turn/start');
    actor.send({ type: 'native.message', message: { error: { code: -32600, message: 'invalid turn input' }, id: lastRequest()?.id } });
    const refused = outputs.find((output) => output.type === 'acp.error' && output.requestId === 'p1');
    expect(refused).to.deep.include({ type: 'acp.error', requestId: 'p1' });
    expect((refused as { error: { message: string } }).error.message).to.contain('Codex refused the turn: invalid turn input');
    expect(actor.getSnapshot().value).to.equal('ready');
    expect(outputs.filter((output) => output.type === 'port.busy').at(-1)).to.deep.include({ busy: false });

    const turnsBefore = written().filter((request) => request.method === 'turn/start').length;
    prompt('p2');
    expect(written().filter((request) => request.method === 'turn/start').length).to.equal(turnsBefore + 1);
    expect(actor.getSnapshot().value).to.equal('prompting');
    actor.stop();
  });
});
