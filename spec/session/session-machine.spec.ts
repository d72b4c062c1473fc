import { expect } from 'chai';
import { createActor } from 'xstate';
import { sessionMachine, type SessionMachineEvent } from '../../src/session/session-machine.js';
import { toolCallReported, toolCallsRunning } from '../../src/session/tool-calls.js';

function run(...events: SessionMachineEvent[]) {
  const actor = createActor(sessionMachine, { input: { sessionId: 's1', agent: 'claude' } }).start();
  const states: string[] = [String(actor.getSnapshot().value)];
  for (const event of events) {
    actor.send(event);
    states.push(String(actor.getSnapshot().value));
  }
  return { states, snapshot: actor.getSnapshot() };
}

describe('session state chart', () => {
  it('starting → ready → prompting → awaitingPermission → prompting → ready', () => {
    const { states, snapshot } = run({ type: 'ready' }, { type: 'prompt', requestId: 'p1' }, { type: 'permission.asked' }, { type: 'permission.answered' }, { type: 'prompt.settled', outcome: 'end_turn', requestId: 'p1' });
    expect(states).to.deep.equal(['starting', 'ready', 'prompting', 'awaitingPermission', 'prompting', 'ready']);
    expect(snapshot.context).to.include({ promptsSettled: 1, lastOutcome: 'end_turn', promptsInFlight: 0 });
  });

  it('cancel from prompting or awaitingPermission goes through cancelling back to ready', () => {
    expect(run({ type: 'ready' }, { type: 'prompt', requestId: 'p1' }, { type: 'cancel' }, { type: 'prompt.settled', outcome: 'cancelled', requestId: 'p1' }).states).to.deep.equal(['starting', 'ready', 'prompting', 'cancelling', 'ready']);
    expect(run({ type: 'ready' }, { type: 'prompt', requestId: 'p1' }, { type: 'permission.asked' }, { type: 'cancel' }, { type: 'permission.answered' }, { type: 'prompt.settled', outcome: 'cancelled', requestId: 'p1' }).states)
      .to.deep.equal(['starting', 'ready', 'prompting', 'awaitingPermission', 'cancelling', 'cancelling', 'ready']);
  });

  it('a crash mid-prompt: recovering while the crashed prompt settles, then ready, restarts counted', () => {
    const { states, snapshot } = run({ type: 'ready' }, { type: 'prompt', requestId: 'p1' }, { type: 'agent.restarting', restarts: 1 }, { type: 'prompt.settled', outcome: 'error', requestId: 'p1' }, { type: 'agent.recovered', restarts: 1 });
    expect(states).to.deep.equal(['starting', 'ready', 'prompting', 'recovering', 'recovering', 'ready']);
    expect(snapshot.context).to.include({ restarts: 1, lastOutcome: 'error' });
  });

  it('a prompt that arrives while recovering runs once the agent is back', () => {
    const { states } = run({ type: 'ready' }, { type: 'agent.restarting', restarts: 1 }, { type: 'prompt', requestId: 'p1' }, { type: 'agent.recovered', restarts: 1 }, { type: 'prompt.settled', outcome: 'end_turn', requestId: 'p1' });
    expect(states).to.deep.equal(['starting', 'ready', 'recovering', 'recovering', 'prompting', 'ready']);
  });

  it('restarting again while recovering counts each restart', () => {
    const { snapshot } = run({ type: 'ready' }, { type: 'agent.restarting', restarts: 1 }, { type: 'agent.restarting', restarts: 2 }, { type: 'agent.recovered', restarts: 2 });
    expect(snapshot.context.restarts).to.equal(2);
    expect(snapshot.value).to.equal('ready');
  });

  it('failed and closed are final, from any live state, and keep why', () => {
    const failed = run({ type: 'ready' }, { type: 'prompt', requestId: 'p1' }, { type: 'agent.failed', reason: 'intensity exceeded' }, { type: 'prompt', requestId: 'p2' });
    expect(failed.states.slice(-2)).to.deep.equal(['failed', 'failed']);
    expect(failed.snapshot.status).to.equal('done');
    expect(failed.snapshot.context.failure).to.equal('intensity exceeded');
    const closed = run({ type: 'ready' }, { type: 'close' }, { type: 'ready' });
    expect(closed.states.slice(-2)).to.deep.equal(['closed', 'closed']);
  });

  it('owner: from its input (the journal said so when the host created or claimed it), changed by owner.changed in any live state, kept once final; none by default', () => {
    expect(run().snapshot.context.owner).to.equal(undefined);
    const actor = createActor(sessionMachine, { input: { sessionId: 's1', agent: 'claude', owner: { hostId: 'host-a', hostName: 'box-a', epoch: 1, here: true } } }).start();
    expect(actor.getSnapshot().context.owner).to.deep.equal({ hostId: 'host-a', hostName: 'box-a', epoch: 1, here: true });
    actor.send({ type: 'ready' });
    actor.send({ type: 'prompt', requestId: 'p1' });
    actor.send({ type: 'owner.changed', owner: { hostId: 'host-b', epoch: 2, here: false } });
    expect(actor.getSnapshot().value, 'a fact: the state stays').to.equal('prompting');
    expect(actor.getSnapshot().context.owner).to.deep.equal({ hostId: 'host-b', epoch: 2, here: false });
    actor.send({ type: 'agent.failed', reason: 'this host lost it' });
    actor.send({ type: 'owner.changed', owner: { hostId: 'host-c', epoch: 3, here: false } });
    expect(actor.getSnapshot().value).to.equal('failed');
    expect(actor.getSnapshot().context.owner).to.deep.equal({ hostId: 'host-b', epoch: 2, here: false });
  });

  it('a prompt that comes while cancelling waits (cancelling), and runs once the cancelled one settles (prompting), then ready', () => {
    const { states, snapshot } = run({ type: 'ready' }, { type: 'prompt', requestId: 'p1' }, { type: 'cancel' }, { type: 'prompt', requestId: 'p2' }, { type: 'prompt.settled', outcome: 'cancelled', requestId: 'p1' }, { type: 'prompt.settled', outcome: 'end_turn', requestId: 'p2' });
    expect(states).to.deep.equal(['starting', 'ready', 'prompting', 'cancelling', 'cancelling', 'prompting', 'ready']);
    expect(snapshot.context).to.include({ promptsInFlight: 0, promptsSettled: 2, lastOutcome: 'end_turn' });
  });

  it('a mode or config the agent reports on its own: a choice in a live session, the new process\'s setup while it (re)starts', () => {
    const modes = { currentModeId: 'default', availableModes: [{ id: 'default', name: 'Default' }, { id: 'plan', name: 'Plan' }] };
    const option = (value: string) => ({ id: 'model', name: 'Model', type: 'select' as const, currentValue: value, options: [{ value: 'sonnet', name: 'Sonnet' }, { value: 'haiku', name: 'Haiku' }] });
    const live = run({ type: 'setup.reported', modes, configOptions: [option('sonnet')] }, { type: 'ready' }, { type: 'mode.reported', currentModeId: 'plan' }, { type: 'config.reported', configOptions: [option('haiku')] });
    expect(live.snapshot.context.state.chosen).to.deep.equal({ modeId: 'plan', config: { model: 'haiku' } });
    const restarting = run(
      { type: 'setup.reported', modes, configOptions: [option('sonnet')] }, { type: 'ready' }, { type: 'agent.restarting', restarts: 1 },
      { type: 'mode.reported', currentModeId: 'plan' }, { type: 'config.reported', configOptions: [option('haiku')] },
    );
    expect(restarting.snapshot.context.state.chosen, 'nothing chosen').to.deep.equal({ modeId: undefined, config: {} });
    expect(restarting.snapshot.context.state.modes?.currentModeId, 'where the new process starts').to.equal('plan');
    expect(restarting.snapshot.context.state.configOptions?.[0]?.currentValue).to.equal('haiku');
    const starting = run({ type: 'setup.reported', modes }, { type: 'mode.reported', currentModeId: 'plan' });
    expect(starting.snapshot.context.state.chosen.modeId).to.equal(undefined);
  });

  it("the tool calls of a turn, kept beside it: forgotten once its turns are over, and when its agent restarts", () => {
    const actor = createActor(sessionMachine, { input: { sessionId: 's1', agent: 'claude' } }).start();
    actor.send({ type: 'ready' });
    actor.send({ type: 'prompt', requestId: 'p1' });
    actor.send({ type: 'prompt', requestId: 'p2' });
    toolCallReported(actor, { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'read' });
    actor.send({ type: 'prompt.settled', outcome: 'end_turn', requestId: 'p1' });
    expect(toolCallsRunning(actor), 'a turn still in flight').to.deep.equal(['t1']);
    actor.send({ type: 'prompt.settled', outcome: 'end_turn', requestId: 'p2' });
    expect(toolCallsRunning(actor), 'its turns over').to.deep.equal([]);
    actor.send({ type: 'prompt', requestId: 'p3' });
    toolCallReported(actor, { sessionUpdate: 'tool_call', toolCallId: 't2', title: 'write' });
    actor.send({ type: 'agent.restarting', restarts: 1 });
    expect(toolCallsRunning(actor), 'its agent restarting').to.deep.equal([]);
  });

  it('starts from the restarts a journal already counted', () => {
    const actor = createActor(sessionMachine, { input: { sessionId: 's1', agent: 'codex', restarts: 4 } }).start();
    actor.send({ type: 'agent.restarting', restarts: 1 });
    expect(actor.getSnapshot().context.restarts).to.equal(5);
  });

  it('re-applying after a restart: reapplying until the last answer of its round, a stale answer (the agent restarted again) counts for nothing', () => {
    const { states, snapshot } = run(
      { type: 'ready' }, { type: 'mode.changed', currentModeId: 'plan' },
      { type: 'agent.restarting', restarts: 1 }, { type: 'reapply.started', requests: 2 }, { type: 'reapply.answered', round: 2 },
      { type: 'agent.restarting', restarts: 2 }, { type: 'reapply.started', requests: 1 }, { type: 'reapply.answered', round: 2 }, { type: 'reapply.answered', round: 4 },
    );
    expect(states).to.deep.equal(['starting', 'ready', 'ready', 'recovering', 'reapplying', 'reapplying', 'recovering', 'reapplying', 'reapplying', 'ready']);
    expect(snapshot.context).to.include({ restarts: 2, reapplyRound: 4, reapplyOutstanding: 0 });
    expect(snapshot.context.state.chosen.modeId).to.equal('plan');
  });

  it('a load or resume that re-applies: starting → reapplying → ready; the crashed prompt may settle meanwhile', () => {
    expect(run({ type: 'reapply.started', requests: 1 }, { type: 'reapply.answered', round: 1 }).states).to.deep.equal(['starting', 'reapplying', 'ready']);
    const { states } = run({ type: 'ready' }, { type: 'prompt', requestId: 'p1' }, { type: 'agent.restarting', restarts: 1 }, { type: 'reapply.started', requests: 1 }, { type: 'prompt.settled', outcome: 'error', requestId: 'p1' }, { type: 'reapply.answered', round: 2 });
    expect(states.slice(-3)).to.deep.equal(['reapplying', 'reapplying', 'ready']);
  });
});
