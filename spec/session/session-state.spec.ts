import { expect } from 'chai';
import type { SessionConfigOption, SessionUpdate } from '@agentclientprotocol/sdk';
import { createActor, fromCallback } from 'xstate';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { reapplyRequests } from '../../src/session/reapply.js';
import { toolCallReported, toolCallsAfter, toolCallsEnded, toolCallsRunning } from '../../src/session/tool-calls.js';
import { chosenFromEntries, initialSessionState, reduceSessionState, setupOf, type SessionState, type SessionStateFact } from '../../src/session/session-state.js';

const models: SessionConfigOption[] = [{ id: 'model', name: 'Model', type: 'select', currentValue: 'fast', options: [{ value: 'fast', name: 'Fast' }, { value: 'thorough', name: 'Thorough' }] }];
const modes = { currentModeId: 'ask', availableModes: [{ id: 'ask', name: 'Ask' }, { id: 'plan', name: 'Plan' }] };
const reduce = (...facts: SessionStateFact[]): SessionState => facts.reduce(reduceSessionState, initialSessionState());

describe('session state (the record the session machine keeps)', () => {
  it('the agent\'s setup is reported, not chosen; set_mode and set_config_option answered are chosen, and shown', () => {
    const reported = reduce({ type: 'setup.reported', modes, configOptions: models });
    expect(reported.chosen).to.deep.equal({ modeId: undefined, config: {} });
    const chosen = reduceSessionState(reduceSessionState(reported, { type: 'mode.changed', currentModeId: 'plan' }), { type: 'config.set', configId: 'model', value: 'thorough' });
    expect(chosen.chosen).to.deep.equal({ modeId: 'plan', config: { model: 'thorough' } });
    expect(setupOf(chosen).modes?.currentModeId).to.equal('plan');
    expect(setupOf(chosen).configOptions?.[0]?.currentValue).to.equal('thorough');
  });

  it('a config_option_update that moves a value is a choice; one that repeats it is not', () => {
    const reported = reduce({ type: 'setup.reported', configOptions: models });
    expect(reduceSessionState(reported, { type: 'config.changed', configOptions: models }).chosen.config).to.deep.equal({});
    const moved = [{ ...models[0], currentValue: 'thorough' }] as SessionConfigOption[];
    expect(reduceSessionState(reported, { type: 'config.changed', configOptions: moved }).chosen.config).to.deep.equal({ model: 'thorough' });
  });

  it('keeps the title and the commands; the tool calls running in the turn are kept beside it', () => {
    const state = reduce(
      { type: 'update.reported', update: { sessionUpdate: 'session_info_update', title: 'Fix the bug' } },
      { type: 'update.reported', update: { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'tool', description: 'd' }] } },
    );
    const toolUpdates: SessionUpdate[] = [
      { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'read' },
      { sessionUpdate: 'tool_call', toolCallId: 't2', title: 'write' },
      { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed' },
    ];
    expect(state).to.deep.include({ title: 'Fix the bug' });
    expect(toolUpdates.reduce(toolCallsAfter, [])).to.deep.equal(['t2']);
    expect(state.commands?.map((command) => command.name)).to.deep.equal(['tool']);
  });

  it('the tool calls running are kept per session machine actor, until its turns are over', () => {
    const machine = createActor(fromCallback(() => {}));
    const other = createActor(fromCallback(() => {}));
    toolCallReported(machine, { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'read' });
    toolCallReported(machine, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'reading' } });
    toolCallReported(machine, { sessionUpdate: 'tool_call', toolCallId: 't2', title: 'write', status: 'failed' });
    expect(toolCallsRunning(machine)).to.deep.equal(['t1']);
    expect(toolCallsRunning(other)).to.deep.equal([]);
    toolCallsEnded(machine);
    expect(toolCallsRunning(machine)).to.deep.equal([]);
  });

  it('re-apply: after an agent restart every choice, mode first; after a warden restart only what the agent\'s answer does not show', () => {
    const state = reduce({ type: 'setup.reported', modes, configOptions: models }, { type: 'mode.changed', currentModeId: 'plan' }, { type: 'config.set', configId: 'model', value: 'thorough' });
    expect(reapplyRequests('s1', state, { onlyDifferences: false }).map((request) => [request.method, request.params])).to.deep.equal([
      ['session/set_mode', { sessionId: 's1', modeId: 'plan' }],
      ['session/set_config_option', { sessionId: 's1', configId: 'model', value: 'thorough' }],
    ]);
    expect(reapplyRequests('s1', state, { onlyDifferences: true })).to.deep.equal([]);
    // A new warden: the journal's choices, the agent's defaults.
    const fresh = reduceSessionState(initialSessionState(state.chosen), { type: 'setup.reported', modes, configOptions: models });
    expect(reapplyRequests('s1', fresh, { onlyDifferences: true }).map((request) => request.what)).to.deep.equal(['mode plan', 'model thorough']);
    expect(reapplyRequests('s1', initialSessionState(), { onlyDifferences: false })).to.deep.equal([]);
  });

  it('a boolean option is re-applied as a boolean request', () => {
    const state = initialSessionState({ modeId: undefined, config: { brave: true } });
    expect(reapplyRequests('s1', state, { onlyDifferences: false })[0]?.params).to.deep.equal({ sessionId: 's1', configId: 'brave', value: true, type: 'boolean' });
  });
});

describe('journaled session state (sqlite)', () => {
  it('stateEntries reads the mode, config and resume entries alone, in order; the last of each is what the user chose', () => {
    const journal = sqliteJournal(':memory:');
    journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    // A prompt whose text looks like a state entry is still conversation.
    journal.append('s1', { kind: 'prompt', prompt: [{ type: 'text', text: '{"kind":"mode","modeId":"x"}' }] });
    journal.append('s1', { kind: 'mode', modeId: 'plan' });
    journal.append('s1', { kind: 'update', update: { sessionUpdate: 'current_mode_update', currentModeId: 'plan' } });
    journal.append('s1', { kind: 'config', configId: 'model', value: 'thorough' });
    journal.append('s1', { kind: 'resume', resume: { claudeSessionId: 'c1' } });
    journal.append('s1', { kind: 'mode', modeId: 'auto' });
    const records = journal.stateEntries?.('s1') ?? [];
    expect(records.map((record) => record.entry.kind)).to.deep.equal(['mode', 'config', 'resume', 'mode']);
    expect(chosenFromEntries(records)).to.deep.equal({ modeId: 'auto', config: { model: 'thorough' } });
    // A session of an older store (no such entries) chose nothing.
    journal.createSession({ sessionId: 'old', agent: 'demo', cwd: '/w' });
    journal.append('old', { kind: 'prompt', prompt: [{ type: 'text', text: 'hi' }] });
    expect(chosenFromEntries(journal.stateEntries?.('old') ?? [])).to.deep.equal({ modeId: undefined, config: {} });
    // A fork copies the conversation, not the state entries.
    journal.forkSession({ sessionId: 'f1', agent: 'demo', cwd: '/w', from: 's1' });
    expect(journal.stateEntries?.('f1')).to.deep.equal([]);
    journal.close();
  });
});
