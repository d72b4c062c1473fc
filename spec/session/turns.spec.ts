import { expect } from 'chai';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, SimulatedClock } from 'xstate';
import { launchWarden, pathWithFakeAgents, stopWardens } from '../support/acp-editor.js';
import { listenAsInspector, type InspectorListener } from '../support/inspector-listener.js';
import { PipeEditor, type WireMessage } from '../support/pipe-editor.js';
import { waitUntil } from '../support/processes.js';
import { sessionMachine, type SessionMachineEmitted, type SessionMachineEvent } from '../../src/session/session-machine.js';
import type { ChosenSettings } from '../../src/session/session-state.js';
import { cancelCame, graceOver, lateTurnUpdate, noTurns, promptAnswered, promptCame, sessionAsked } from '../../src/session/turn-queue.js';

/** A session machine on a simulated clock, with everything it told its host, in order. */
function session(cancelGraceMs = 5000, chosen?: ChosenSettings) {
  const clock = new SimulatedClock();
  const actor = createActor(sessionMachine, { clock, input: { sessionId: 's1', agent: 'claude', cancelGraceMs, ...(chosen ? { chosen } : {}) } });
  const told: string[] = [];
  actor.on('*', (command: SessionMachineEmitted) => {
    const outcome = command.type === 'turn.answer' ? ` ${(command.result as { stopReason?: string }).stopReason}` : command.type === 'turn.fail' ? ` ${(command.error.data as { reason?: string } | undefined)?.reason ?? command.error.message}` : '';
    if (command.type === 'turns.release') return void told.push('turns.release');
    told.push(`${command.type} ${command.requestId}${command.type === 'turn.start' && command.hold ? ' held' : ''}${outcome}`);
  });
  actor.start();
  actor.send({ type: 'ready' });
  const send = (...events: SessionMachineEvent[]) => {
    for (const event of events) actor.send(event);
  };
  const answered = (requestId: string, stopReason = 'end_turn'): SessionMachineEvent => ({ type: 'prompt.settled', outcome: stopReason, requestId, result: { stopReason } });
  return { actor, clock, told, send, answered, state: () => String(actor.getSnapshot().value), turns: () => actor.getSnapshot().context.turns };
}

describe('session turns (the session machine decides them)', () => {
  it('three prompts run one at a time, in the order they came, each answered with what the agent said', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'prompt', requestId: 'p2' }, { type: 'prompt', requestId: 'p3' });
    expect(s.told).to.deep.equal(['turn.start p1']);
    expect(s.turns().waiting).to.deep.equal(['p2', 'p3']);
    s.send(s.answered('p1'));
    s.send(s.answered('p2', 'max_tokens'));
    s.send(s.answered('p3'));
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.answer p1 end_turn', 'turn.start p2', 'turn.answer p2 max_tokens', 'turn.start p3', 'turn.answer p3 end_turn']);
    expect(s.state()).to.equal('ready');
    expect(s.actor.getSnapshot().context).to.include({ promptsSettled: 3, promptsInFlight: 0, lastOutcome: 'end_turn' });
  });

  it('a $/cancel_request of a waiting prompt answers it cancelled at once; the running one and the others go on', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'prompt', requestId: 'p2' }, { type: 'prompt', requestId: 'p3' }, { type: 'cancel', requestId: 'p2' });
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.answer p2 cancelled']);
    expect(s.state(), 'the running prompt is not cancelled').to.equal('prompting');
    s.send(s.answered('p1'));
    expect(s.told.slice(2)).to.deep.equal(['turn.answer p1 end_turn', 'turn.start p3']);
  });

  it('session/cancel: the waiting prompts end cancelled at once, the running one is cancelled on the agent and ends cancelled whatever the agent answers', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'prompt', requestId: 'p2' }, { type: 'cancel' });
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.answer p2 cancelled', 'turn.cancelAgent p1']);
    expect(s.state()).to.equal('cancelling');
    s.send(s.answered('p1', 'end_turn'));
    expect(s.told.slice(3)).to.deep.equal(['turn.answer p1 cancelled']);
    expect(s.state()).to.equal('ready');
    // The agent answered within the grace: nothing more comes when it would have run out.
    s.clock.increment(10_000);
    expect(s.told).to.have.length(4);
  });

  it('an agent that errors after a cancel: the prompt still ends cancelled, not with the error', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'cancel' }, { type: 'prompt.settled', outcome: 'error', requestId: 'p1', error: { code: -32603, message: 'aborted' } });
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.cancelAgent p1', 'turn.answer p1 cancelled']);
  });

  it('the cancel grace runs out: answered cancelled, the late updates of that turn dropped, the next prompt starts, the late answer is no news', () => {
    const s = session(5000);
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'cancel' }, { type: 'prompt', requestId: 'p2' });
    s.clock.increment(4999);
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.cancelAgent p1']);
    s.clock.increment(1);
    expect(s.told.slice(2)).to.deep.equal(['turn.answer p1 cancelled', 'turn.start p2']);
    // The old turn is still winding down on the agent.
    expect(s.state()).to.equal('cancelling');
    expect(s.actor.getSnapshot().context.promptsInFlight).to.equal(2);
    s.send(s.answered('p1', 'end_turn'));
    expect(s.told).to.have.length(4);
    expect(s.state()).to.equal('prompting');
    s.send(s.answered('p2'));
    expect(s.told.slice(4)).to.deep.equal(['turn.answer p2 end_turn']);
    expect(s.state()).to.equal('ready');
  });

  it('after a grace that ran out with nothing waiting, the turn is quiet (its late updates are dropped) until the next prompt', () => {
    const s = session(1000);
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'cancel' });
    expect(s.turns().quiet).to.equal(false);
    s.clock.increment(1000);
    expect(s.turns().quiet).to.equal(true);
    s.send({ type: 'prompt', requestId: 'p2' });
    expect(s.turns().quiet).to.equal(false);
    expect(s.told.slice(-1)).to.deep.equal(['turn.start p2']);
  });

  it('a cancel while the agent waits for a permission: the permission is answered cancelled for the agent, the prompt ends cancelled', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'permission.asked' });
    expect(s.state()).to.equal('awaitingPermission');
    s.send({ type: 'cancel' });
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.cancelAgent p1', 'turn.permissionCancelled p1']);
    s.send({ type: 'permission.answered' }, s.answered('p1', 'cancelled'));
    expect(s.told.slice(3)).to.deep.equal(['turn.answer p1 cancelled']);
    expect(s.state()).to.equal('ready');
  });

  it('an agent restart mid-turn: the prompt in flight settles with what the agent answers (agent_crashed), a prompt that came meanwhile runs after it', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'agent.restarting', restarts: 1 }, { type: 'prompt', requestId: 'p2' });
    expect(s.state()).to.equal('recovering');
    expect(s.told).to.deep.equal(['turn.start p1']);
    s.send({ type: 'prompt.settled', outcome: 'error', requestId: 'p1', error: { code: -32603, message: 'claude exited', data: { reason: 'agent_crashed' } } });
    expect(s.told.slice(1)).to.deep.equal(['turn.fail p1 agent_crashed', 'turn.start p2']);
    s.send({ type: 'agent.recovered', restarts: 1 });
    expect(s.state()).to.equal('prompting');
    s.send(s.answered('p2'));
    expect(s.state()).to.equal('ready');
    expect(s.actor.getSnapshot().context.restarts).to.equal(1);
  });

  it('an agent restart with the user\'s choices to give back: a prompt that starts while recovering or re-applying is held, and released once the last re-apply is answered', () => {
    const s = session(5000, { modeId: 'plan', config: { model: 'haiku' } });
    s.send({ type: 'agent.restarting', restarts: 1 }, { type: 'prompt', requestId: 'p1' });
    expect(s.told).to.deep.equal(['turn.start p1 held']);
    s.send({ type: 'reapply.started', requests: 2 }, { type: 'prompt', requestId: 'p2' });
    expect(s.state()).to.equal('reapplying');
    s.send({ type: 'reapply.answered', round: s.actor.getSnapshot().context.reapplyRound });
    expect(s.told, 'one of two answered: nothing released').to.deep.equal(['turn.start p1 held']);
    s.send({ type: 'reapply.answered', round: s.actor.getSnapshot().context.reapplyRound });
    expect(s.told).to.deep.equal(['turn.start p1 held', 'turns.release']);
    expect(s.state()).to.equal('prompting');
    s.send(s.answered('p1'));
    // p2 waited in the queue behind p1 (one turn at a time); it starts now, not held.
    expect(s.told.slice(2)).to.deep.equal(['turn.answer p1 end_turn', 'turn.start p2']);
  });

  it('an agent restart with nothing chosen: a prompt that starts while recovering is not held, and the recovery releases (nothing)', () => {
    const s = session();
    s.send({ type: 'agent.restarting', restarts: 1 }, { type: 'prompt', requestId: 'p1' }, { type: 'agent.recovered', restarts: 1 });
    expect(s.told).to.deep.equal(['turn.start p1', 'turns.release']);
    expect(s.state()).to.equal('prompting');
  });

  it('close with prompts waiting: every one ends cancelled at once, the running one is cancelled on the agent, and its late answer is dropped', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'prompt', requestId: 'p2' }, { type: 'prompt', requestId: 'p3' }, { type: 'close' });
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.answer p2 cancelled', 'turn.answer p3 cancelled', 'turn.cancelAgent p1', 'turn.answer p1 cancelled']);
    expect(s.state()).to.equal('closed');
    s.clock.increment(10_000);
    expect(s.told).to.have.length(5);
  });

  it('failure: the running prompt and the waiting ones fail session_failed, naming why', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'prompt', requestId: 'p2' }, { type: 'agent.failed', reason: 'more than 3 restarts in 60000 ms' });
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.fail p1 session_failed', 'turn.fail p2 session_failed']);
    expect(s.state()).to.equal('failed');
    expect(s.actor.getSnapshot().context.failure).to.equal('more than 3 restarts in 60000 ms');
  });

  it('failure after a cancel: the cancelled prompt still ends cancelled', () => {
    const s = session();
    s.send({ type: 'prompt', requestId: 'p1' }, { type: 'cancel' }, { type: 'agent.failed', reason: 'gave up' });
    expect(s.told).to.deep.equal(['turn.start p1', 'turn.cancelAgent p1', 'turn.answer p1 cancelled']);
  });
});

describe('session turns, decided (turn-queue.ts, pure: what the agent server carries out for a bare agent)', () => {
  const cancelledAndOver = () => {
    const started = promptCame(noTurns, 'p1').turns;
    return graceOver(cancelCame(started, undefined, false).turns, 'p1');
  };

  it('after a cancelled prompt was answered, its turn\'s late updates are dropped, other updates are not', () => {
    const over = cancelledAndOver();
    expect(over.commands).to.deep.equal([{ type: 'turn.answer', requestId: 'p1', result: { stopReason: 'cancelled' } }]);
    for (const kind of ['agent_message_chunk', 'agent_thought_chunk', 'user_message_chunk', 'tool_call', 'tool_call_update', 'plan']) expect(lateTurnUpdate(over.turns, kind), kind).to.equal(true);
    for (const kind of ['session_info_update', 'current_mode_update', 'config_option_update', 'available_commands_update']) expect(lateTurnUpdate(over.turns, kind), kind).to.equal(false);
  });

  it('a turn that runs, or one answered without a cancel, drops nothing', () => {
    const running = promptCame(noTurns, 'p1').turns;
    expect(lateTurnUpdate(running, 'agent_message_chunk')).to.equal(false);
    expect(lateTurnUpdate(promptAnswered(running, 'p1', { stopReason: 'end_turn' }, undefined).turns, 'agent_message_chunk')).to.equal(false);
    // Cancelled but still running: what the agent says until it answers is the turn's, shown.
    expect(lateTurnUpdate(cancelCame(running, undefined, false).turns, 'agent_message_chunk')).to.equal(false);
  });

  it('another request on the session ends the quiet (a load replays), and keeps the rest of the turns', () => {
    const { turns } = cancelledAndOver();
    const asked = sessionAsked(turns);
    expect(lateTurnUpdate(asked, 'agent_message_chunk')).to.equal(false);
    expect(asked).to.deep.equal({ ...turns, quiet: false });
    expect(asked.abandoned, 'the late answer of the cancelled prompt is still dropped').to.deep.equal(['p1']);
    expect(promptAnswered(asked, 'p1', { stopReason: 'end_turn' }, undefined).commands).to.deep.equal([]);
    expect(sessionAsked(noTurns)).to.equal(noTurns);
  });

  it('the next prompt ends the quiet too', () => {
    const { turns } = cancelledAndOver();
    const next = promptCame(turns, 'p2');
    expect(next.commands).to.deep.equal([{ type: 'turn.start', requestId: 'p2' }]);
    expect(lateTurnUpdate(next.turns, 'agent_message_chunk')).to.equal(false);
  });
});

describe('session turns through warden acp (claude found by name on the PATH, the inspector listening)', function () {
  this.timeout(60_000);
  let dir: string;
  let inspector: InspectorListener;
  let url: string;
  let frames: string[];

  beforeEach(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-turns-')));
    inspector = await listenAsInspector();
    ({ url, frames } = inspector);
  });

  afterEach(async () => {
    await stopWardens();
    await inspector.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The session machine's snapshots of `sessionId` in the inspection stream, in order. */
  const chartSnapshots = (sessionId: string) =>
    frames
      .map((frame) => JSON.parse(frame) as { type?: string; snapshot?: { value?: unknown; context?: { sessionId?: string; turns?: { waiting: string[]; running?: string }; promptsSettled?: number } } })
      .filter((event) => event.type === '@xstate.snapshot' && event.snapshot?.context?.sessionId === sessionId && event.snapshot.context.turns !== undefined)
      .map((event) => event.snapshot as { value: unknown; context: { turns: { waiting: string[]; running?: string }; promptsSettled: number; lastOutcome?: string } });

  it('three prompts written at once: the editor gets three answers in order, and the session chart queued two while the first ran, then ran each in turn', async () => {
    // Paced at 50 ms a line, the first turn runs well past the moment the other two prompts are read
    // (unpaced, a loaded machine once read the third after the first turn had ended: CI, 2026-12-04).
    const warden = await launchWarden(['--agent', 'claude', '--store', ':memory:', '--inspect', url, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_LOOP=1', '--env', 'FAKE_CLAUDE_DELAY_MS=50'], { PATH: pathWithFakeAgents(dir) });
    const { sessionId } = await warden.request<{ sessionId: string }>('session/new', { cwd: dir, mcpServers: [] });
    const order: number[] = [];
    const prompts = [1, 2, 3].map((n) => warden.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text: `hello ${n}` }] }).then((answer) => {
      order.push(n);
      return answer.stopReason;
    }));
    expect(await Promise.all(prompts)).to.deep.equal(['end_turn', 'end_turn', 'end_turn']);
    expect(order, 'the editor heard the prompts end in the order it sent them').to.deep.equal([1, 2, 3]);
    await waitUntil(() => chartSnapshots(sessionId).some((snapshot) => snapshot.context.promptsSettled === 3 && snapshot.value === 'ready'), 'the session chart to have settled all three', 20_000);
    const snapshots = chartSnapshots(sessionId);
    expect(Math.max(...snapshots.map((snapshot) => snapshot.context.turns.waiting.length)), 'two prompts waited while the first ran').to.equal(2);
    // The prompts the chart ran, in order: one at a time, as many as the editor got answers.
    const ran = snapshots.map((snapshot) => snapshot.context.turns.running).filter((id, index, all): id is string => id !== undefined && id !== all[index - 1]);
    expect(ran).to.have.length(3);
    expect(new Set(ran).size).to.equal(3);
    const last = snapshots.at(-1);
    expect(last?.context).to.deep.include({ promptsSettled: 3, lastOutcome: 'end_turn' });
    expect(last?.context.turns.waiting).to.deep.equal([]);
    expect(last?.context.turns.running, 'nothing runs once all three are answered').to.equal(undefined);
    expect(await warden.close()).to.equal(0);
  });

  it('session/cancel while Claude waits for a permission and a second prompt waits: both end cancelled, the chart went awaitingPermission → cancelling → ready, and the next prompt runs', async () => {
    const seen: WireMessage[] = [];
    const editor = PipeEditor.launch({
      args: ['--agent', 'claude', '--store', ':memory:', '--inspect', url, '--env', 'FAKE_CLAUDE_FIXTURE=tool-write-permission-allow', '--env', 'FAKE_CLAUDE_LOOP=1'],
      env: { PATH: pathWithFakeAgents(dir) },
      onMessage: (message) => seen.push(message),
    });
    try {
      expect((await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} })).error).to.equal(undefined);
      const sessionId = (await editor.request('session/new', { cwd: dir, mcpServers: [] })).result.sessionId as string;
      const first = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write the file' }] }, 'p1');
      const second = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'and then?' }] }, 'p2');
      // This editor never answers the permission: the turn waits for it.
      await waitUntil(() => seen.some((message) => message.method === 'session/request_permission'), 'the permission request', 30_000);
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } }));
      expect((await second).result, 'the waiting prompt').to.deep.equal({ stopReason: 'cancelled' });
      expect((await first).result, 'the running prompt').to.deep.equal({ stopReason: 'cancelled' });
      const values = () => chartSnapshots(sessionId).map((snapshot) => String(snapshot.value)).filter((value, index, all) => value !== all[index - 1]);
      // The inspection stream comes over its own socket: what it says of the cancel may still be on its way.
      await waitUntil(() => values().lastIndexOf('ready') > values().indexOf('cancelling') && values().includes('cancelling'), `the chart to be ready after cancelling (${values().join(' → ')})`, 20_000);
      const shown = values();
      expect(shown.slice(shown.indexOf('awaitingPermission')), shown.join(' → ')).to.deep.equal(['awaitingPermission', 'cancelling', 'ready']);
      // The next prompt reaches Claude (the looped turn asks for the permission again), and a cancel ends it too.
      const again = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'once more' }] }, 'p3');
      await waitUntil(() => seen.filter((message) => message.method === 'session/request_permission').length === 2, 'the next turn\'s permission request', 30_000);
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } }));
      expect((await again).result).to.deep.equal({ stopReason: 'cancelled' });
    } finally {
      await editor.close();
    }
  });
});
