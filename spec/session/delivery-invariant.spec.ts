/**
 * The delivery invariant checker (spec/support/delivery-invariant.ts, issue 28) on hand-made
 * journals and deliveries: it must name every kind of breach (missing, twice, out of order,
 * before the cursor, not in the journal, not for this client, the wrong update, without a seq),
 * or a race-hunting run that uses it could pass without looking.
 */
import { expect } from 'chai';
import type { JournalEntry } from '../../src/journal/journal.js';
import { deliveryViolations, describeViolations, type ConnectionRecord, type JournalRow } from '../support/delivery-invariant.js';
import type { Frame } from '../support/serve-daemon.js';

const sessionId = 's1';

const chunk = (text: string): JournalEntry => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });
const commands: JournalEntry = { kind: 'update', update: { sessionUpdate: 'available_commands_update', availableCommands: [] } };
const prompt = (text: string): JournalEntry => ({ kind: 'prompt', prompt: [{ type: 'text', text }] });
const stop: JournalEntry = { kind: 'stop', stopReason: 'end_turn' };

/** A `session/update` frame as warden sends it (`seq` undefined: without one). */
function frame(update: Record<string, unknown>, seq?: number, session = sessionId): Frame {
  return { method: 'session/update', params: { sessionId: session, update, ...(seq === undefined ? {} : { _meta: { 'acp-warden/seq': seq } }) } } as Frame;
}
const chunkFrame = (text: string, seq?: number) => frame({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }, seq);
const commandsFrame = (seq?: number) => frame({ sessionUpdate: 'available_commands_update', availableCommands: [] }, seq);
const echoFrame = (text: string, seq: number) => frame({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text } }, seq);
const turnEndFrame = (seq: number) => frame({ sessionUpdate: 'session_info_update', _meta: { 'acp-warden/turnEnded': { stopReason: 'end_turn' } } }, seq);
const noticeFrame = (title: string, seq?: number) => frame({ sessionUpdate: 'notice', severity: 'warning', title }, seq);
/** A notice as a client without `session.notices` gets it: an agent message signed by acp-warden. */
const noticeTextFrame = (title: string, seq?: number) => {
  const meta = { 'acp-warden/notice': { severity: 'warning', title, description: null } };
  return frame({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `\n\n[acp-warden warning] ${title}\n\n`, _meta: meta }, _meta: meta }, seq);
};

/** A journal of session s1: the commands (2), a fact (3), a prompt (5), two chunks (6, 7), its stop (9); other sessions' seqs between. */
const journal: JournalRow[] = [
  { seq: 2, entry: commands },
  { seq: 3, entry: { kind: 'attached', how: 'resume' } },
  { seq: 5, entry: prompt('hello there') },
  { seq: 6, entry: chunk('hello') },
  { seq: 7, entry: chunk('there') },
  { seq: 9, entry: stop },
];
const journals = new Map([[sessionId, journal]]);

function check(frames: Frame[], options: Partial<ConnectionRecord> = {}) {
  return deliveryViolations(journals, [{ client: 'c1', sessionId, after: 0, frames, following: true, prompts: ['hello there'], ...options }]);
}
const kinds = (violations: ReturnType<typeof check>) => violations.map((one) => `${one.kind}@${one.seq ?? '-'}`);

describe('the delivery invariant checker', () => {
  it('passes the prompt sender that got every update once, in order, without its own prompt and turn end', () => {
    expect(check([commandsFrame(2), chunkFrame('hello', 6), chunkFrame('there', 7)])).to.deep.equal([]);
  });

  it('finds an update the journal holds that never arrived (the lost first available_commands_update of defect 1)', () => {
    const violations = check([chunkFrame('hello', 6), chunkFrame('there', 7)]);
    expect(violations).to.deep.equal([{ kind: 'missing', client: 'c1', sessionId, seq: 2, update: 'available_commands_update', detail: 'journaled, never delivered' }]);
    expect(describeViolations(violations)).to.equal('missing: c1, session s1, seq 2, available_commands_update: journaled, never delivered');
  });

  it('lets a connection that stopped following miss the tail, never a gap before the last seq it got', () => {
    expect(check([commandsFrame(2)], { following: false })).to.deep.equal([]);
    expect(kinds(check([commandsFrame(2), chunkFrame('there', 7)], { following: false }))).to.deep.equal(['missing@6']);
  });

  it('finds an update delivered twice', () => {
    expect(kinds(check([commandsFrame(2), chunkFrame('hello', 6), chunkFrame('hello', 6), chunkFrame('there', 7)]))).to.deep.equal(['duplicate@6']);
  });

  it('finds updates out of seq order', () => {
    const violations = check([commandsFrame(2), chunkFrame('there', 7), chunkFrame('hello', 6)]);
    expect(kinds(violations)).to.deep.equal(['out_of_order@6']);
    expect(violations[0]).to.include({ index: 2, detail: 'arrived after seq 7' });
  });

  it('finds what a re-attached connection got again from before its cursor', () => {
    expect(kinds(check([chunkFrame('hello', 6), chunkFrame('there', 7)], { after: 6, prompts: [] }))).to.deep.equal(['before_cursor@6', 'missing@9']);
  });

  it('finds a seq the journal does not hold (another session\'s, or none at all)', () => {
    expect(kinds(check([commandsFrame(2), chunkFrame('hello', 6), chunkFrame('x', 8), chunkFrame('there', 7)]))).to.deep.equal(['not_in_journal@8']);
  });

  it('finds an update without a seq, but takes warden\'s own notices without one (rendered or not)', () => {
    const violations = check([commandsFrame(2), chunkFrame('hello', 6), chunkFrame('there', 7), chunkFrame('lost'), noticeFrame('session moved'), noticeTextFrame('host went away')]);
    expect(violations).to.deep.equal([{ kind: 'unjournaled', client: 'c1', sessionId, seq: undefined, update: 'agent_message_chunk', index: 3, detail: 'agent_message_chunk "lost" without a seq: the journal does not hold it' }]);
  });

  it('shows another connection\'s prompt and its turn end to a connection that did not send it, and requires them', () => {
    const observer = { prompts: [] };
    expect(check([commandsFrame(2), echoFrame('hello there', 5), chunkFrame('hello', 6), chunkFrame('there', 7), turnEndFrame(9)], observer)).to.deep.equal([]);
    expect(kinds(check([commandsFrame(2), chunkFrame('hello', 6), chunkFrame('there', 7)], observer))).to.deep.equal(['missing@5', 'missing@9']);
  });

  it('finds a connection\'s own prompt echoed to it, or a fact shown as an update; its own turn end may come', () => {
    expect(kinds(check([commandsFrame(2), echoFrame('hello there', 5), chunkFrame('hello', 6), chunkFrame('there', 7)]))).to.deep.equal(['not_for_this_client@5']);
    expect(kinds(check([commandsFrame(2), chunkFrame('x', 3), chunkFrame('hello', 6), chunkFrame('there', 7)]))).to.deep.equal(['not_for_this_client@3']);
    expect(check([commandsFrame(2), chunkFrame('hello', 6), chunkFrame('there', 7), turnEndFrame(9)])).to.deep.equal([]);
    expect(kinds(check([commandsFrame(2), chunkFrame('hello', 6), chunkFrame('there', 7), turnEndFrame(9), turnEndFrame(9)]))).to.deep.equal(['duplicate@9']);
  });

  it('finds an update that is not the one its seq names (another kind, other words)', () => {
    expect(kinds(check([chunkFrame('hi', 2), chunkFrame('hello', 6), chunkFrame('there', 7)]))).to.deep.equal(['wrong_update@2']);
    expect(kinds(check([commandsFrame(2), chunkFrame('there', 6), chunkFrame('hello', 7)]))).to.deep.equal(['wrong_update@6', 'wrong_update@7']);
  });

  it('takes a journaled notice as a notice or as the text acp-warden renders it as, with its seq', () => {
    const noticed = new Map([[sessionId, [...journal, { seq: 11, entry: { kind: 'notice', severity: 'warning', title: 'demo restarted', description: undefined } } as JournalRow]]]);
    const base = [commandsFrame(2), chunkFrame('hello', 6), chunkFrame('there', 7)];
    const run = (frames: Frame[]) => deliveryViolations(noticed, [{ client: 'c1', sessionId, after: 0, frames, following: true, prompts: ['hello there'] }]).map((one) => `${one.kind}@${one.seq}`);
    expect(run([...base, noticeFrame('demo restarted', 11)])).to.deep.equal([]);
    expect(run([...base, noticeTextFrame('demo restarted', 11)])).to.deep.equal([]);
    expect(run(base)).to.deep.equal(['missing@11']);
    expect(run([...base, noticeFrame('another title', 11)])).to.deep.equal(['wrong_update@11']);
  });

  it('ignores other sessions\' updates on the same connection, and checks each connection on its own', () => {
    const other = frame({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'elsewhere' } }, 4, 's2');
    const violations = deliveryViolations(journals, [
      { client: 'c1', sessionId, after: 0, frames: [commandsFrame(2), other, chunkFrame('hello', 6), chunkFrame('there', 7)], following: true, prompts: ['hello there'] },
      { client: 'c2', sessionId, after: 7, frames: [], following: true, prompts: [] },
    ]);
    expect(violations.map((one) => `${one.client}:${one.kind}@${one.seq}`)).to.deep.equal(['c2:missing@9']);
  });
});
