/**
 * What a turn is doing, from its updates: the tool calls running, for the port's turn-aware
 * hang watchdog (`port.busy` with `toolRunning`).
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { activityAfter, activityAfterRuns, isNews, isToolRunning, noToolRuns, quietHint, quietTurn, watchdogHint, type TurnActivity } from '../../src/adapters/turn-activity.js';

const call = (toolCallId: string, status?: string): SessionUpdate => ({ sessionUpdate: 'tool_call', toolCallId, title: 'run tests', ...(status ? { status } : {}) }) as SessionUpdate;
const update = (toolCallId: string, status?: string): SessionUpdate => ({ sessionUpdate: 'tool_call_update', toolCallId, ...(status ? { status } : {}) }) as SessionUpdate;
const chunk: SessionUpdate = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'working on it' } };
const after = (...updates: SessionUpdate[]): TurnActivity => updates.reduce(activityAfter, quietTurn);

describe('turn activity (tool calls running, for the hang watchdog)', () => {
  it('a tool call with no status is pending (ACP\'s default): a tool runs', () => {
    expect(after(call('t1'))).to.deep.equal({ t1: 'pending' });
    expect(isToolRunning([after(call('t1'))], false)).to.equal(true);
  });

  it('pending, then in_progress, then completed: running until it completes', () => {
    expect(after(call('t1', 'pending'), update('t1', 'in_progress'))).to.deep.equal({ t1: 'in_progress' });
    expect(after(call('t1', 'pending'), update('t1', 'in_progress'), update('t1', 'completed'))).to.deep.equal({});
    expect(isToolRunning([after(call('t1', 'pending'), update('t1', 'completed'))], false)).to.equal(false);
  });

  it('a failed tool call no longer runs', () => {
    expect(after(call('t1', 'in_progress'), update('t1', 'failed'))).to.deep.equal({});
  });

  it('an update without a status (new content, a title) keeps the status the tool call had', () => {
    expect(after(call('t1', 'in_progress'), update('t1'))).to.deep.equal({ t1: 'in_progress' });
  });

  it('a tool call reported already completed never runs', () => {
    expect(after(call('t1', 'completed'))).to.deep.equal({});
  });

  it('two tool calls: running while either runs', () => {
    const both = after(call('t1', 'in_progress'), call('t2', 'pending'), update('t1', 'completed'));
    expect(both).to.deep.equal({ t2: 'pending' });
    expect(isToolRunning([both], false)).to.equal(true);
    expect(isToolRunning([activityAfter(both, update('t2', 'completed'))], false)).to.equal(false);
  });

  it('messages, thoughts and plans do not change it (the same object back)', () => {
    const running = after(call('t1', 'in_progress'));
    expect(activityAfter(running, chunk)).to.equal(running);
    expect(activityAfter(running, update('t1', 'in_progress'))).to.equal(running);
  });

  it('a permission request waiting for the user: no tool counts as running', () => {
    expect(isToolRunning([after(call('t1', 'pending'))], true)).to.equal(false);
  });

  it('across sessions: running while a tool runs in any of them', () => {
    expect(isToolRunning([quietTurn, after(call('t1', 'in_progress'))], false)).to.equal(true);
    expect(isToolRunning([quietTurn, quietTurn], false)).to.equal(false);
    expect(isToolRunning([], false)).to.equal(false);
  });

  it('a CLI line\'s tool runs (Claude tool_use / tool_result, Codex item started / completed): the same activity, one line may end what it starts', () => {
    const started = activityAfterRuns(quietTurn, { started: ['t1', 't2'], ended: [] });
    expect(started).to.deep.equal({ t1: 'in_progress', t2: 'in_progress' });
    expect(activityAfterRuns(started, { started: [], ended: ['t1'] })).to.deep.equal({ t2: 'in_progress' });
    expect(activityAfterRuns(quietTurn, { started: ['t3'], ended: ['t3'] })).to.equal(quietTurn);
    expect(activityAfterRuns(started, noToolRuns)).to.equal(started);
    // An ACP update ends a tool call a CLI line started, and the other way round.
    expect(activityAfter(started, update('t1', 'completed'))).to.deep.equal({ t2: 'in_progress' });
    expect(activityAfterRuns(after(call('t9')), { started: [], ended: ['t9'] })).to.deep.equal({});
  });

  it('the watchdog hint: busy while owed and nobody is waited for; a tool runs unless the user is asked; a turn open while any of it holds; only a change is news', () => {
    const running = after(call('t1', 'in_progress'));
    expect(watchdogHint({ owes: true, awaitsEditor: false, awaitsUser: false, activities: [running] })).to.deep.equal({ busy: true, toolRunning: true, turnOpen: true });
    expect(watchdogHint({ owes: true, awaitsEditor: true, awaitsUser: false, activities: [running] })).to.deep.equal({ busy: false, toolRunning: true, turnOpen: true });
    expect(watchdogHint({ owes: true, awaitsEditor: true, awaitsUser: true, activities: [running] })).to.deep.equal({ busy: false, toolRunning: false, turnOpen: true });
    expect(watchdogHint({ owes: false, awaitsEditor: true, awaitsUser: false, activities: [quietTurn] })).to.deep.equal({ busy: false, toolRunning: false, turnOpen: true });
    expect(watchdogHint({ owes: false, awaitsEditor: false, awaitsUser: false, activities: [quietTurn] })).to.deep.equal(quietHint);
    expect(isNews(quietHint, { busy: false, toolRunning: false, turnOpen: false })).to.equal(false);
    expect(isNews(quietHint, { busy: true, toolRunning: false, turnOpen: true })).to.equal(true);
    expect(isNews({ busy: true, toolRunning: false, turnOpen: true }, { busy: true, toolRunning: true, turnOpen: true })).to.equal(true);
    // A permission wait that ends with the turn: busy and toolRunning stay false, the turn closes: news (the soft memory limit waits for it).
    expect(isNews({ busy: false, toolRunning: false, turnOpen: true }, quietHint)).to.equal(true);
  });
});
