/**
 * Which session a subagent child belongs to (src/session/subagent-tree.ts) and what an editor
 * gets of a child's journaled update (src/acp/subagent-updates.ts): pure functions.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { asksForSubagents, capabilitiesForAgent, subagentRouting } from '../../src/acp/subagent-updates.js';
import type { Live } from '../../src/acp/server-live.js';
import { SUBAGENT_META_KEY } from '../../src/protocol/native-agent.js';
import { carried, forgetChildren, noteAnnouncement, noteChildCapabilities, topSessionOf, type CancellableChildren, type SubagentParents } from '../../src/session/subagent-tree.js';

const announce = (child: string) => ({ sessionUpdate: 'subagent_update', sessionId: child }) as unknown as SessionUpdate;
const chunk = (text: string, meta?: Record<string, unknown>) => ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text }, ...(meta ? { _meta: meta } : {}) }) as SessionUpdate;

describe('subagent sessions: the tree and the edge', () => {
  it('a child, and a child of a child, belong to the top session; a later announcement does not move a child; forgetting a parent forgets its children and theirs', () => {
    const parents: SubagentParents = new Map();
    noteAnnouncement(parents, 'p', announce('c1'));
    noteAnnouncement(parents, 'c1', announce('c2'));
    noteAnnouncement(parents, 'other', announce('c1'));
    noteAnnouncement(parents, 'p', chunk('not an announcement'));
    expect(topSessionOf(parents, 'c2')).to.equal('p');
    expect(topSessionOf(parents, 'c1')).to.equal('p');
    expect(topSessionOf(parents, 'unknown')).to.equal('unknown');
    expect(carried(parents, 'c2', chunk('hi', { keep: 1 }))).to.deep.equal({ sessionId: 'p', update: chunk('hi', { keep: 1, [SUBAGENT_META_KEY]: 'c2' }) });
    expect(carried(parents, 'p', chunk('own'))).to.deep.equal({ sessionId: 'p', update: chunk('own') });
    noteAnnouncement(parents, 'q', announce('d1'));
    forgetChildren(parents, 'p');
    expect([...parents.keys()]).to.deep.equal(['d1']);
  });

  it('a child may be cancelled while its latest capabilities say cancel: an update without capabilities keeps it, capabilities without cancel or null take it away', () => {
    const cancellable: CancellableChildren = new Set();
    const say = (fields: Record<string, unknown>) => noteChildCapabilities(cancellable, { sessionUpdate: 'subagent_update', sessionId: 'c1', ...fields } as unknown as SessionUpdate);
    say({ title: 'Explore' });
    expect(cancellable.has('c1')).to.equal(false);
    say({ capabilities: { cancel: {} } });
    expect(cancellable.has('c1')).to.equal(true);
    say({ state: { state: 'running' } });
    expect(cancellable.has('c1')).to.equal(true);
    say({ capabilities: {} });
    expect(cancellable.has('c1')).to.equal(false);
    say({ capabilities: { cancel: {} } });
    say({ capabilities: null });
    expect(cancellable.has('c1')).to.equal(false);
    noteChildCapabilities(cancellable, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } } as SessionUpdate);
    expect([...cancellable]).to.deep.equal([]);
  });

  it('an editor that takes subagents gets a child\'s update under the child\'s id without the tag; another one gets neither it nor the subagent-only kinds', () => {
    const v1With = { context: { protocolVersion: 1, clientCapabilities: { subagents: {} } } } as unknown as Live;
    const v1Without = { context: { protocolVersion: 1, clientCapabilities: {} } } as unknown as Live;
    const v2 = { v2: {}, context: { protocolVersion: 2, clientCapabilities: {} } } as unknown as Live;
    const tagged = chunk('hi', { keep: 1, [SUBAGENT_META_KEY]: 'c1' });
    for (const live of [v1With, v2]) {
      expect(subagentRouting(live, 'p', tagged)).to.deep.equal({ sessionId: 'c1', update: chunk('hi', { keep: 1 }) });
      expect(subagentRouting(live, 'p', chunk('bare', { [SUBAGENT_META_KEY]: 'c1' }))).to.deep.equal({ sessionId: 'c1', update: chunk('bare') });
      expect(subagentRouting(live, 'p', announce('c1'))).to.deep.equal({ sessionId: 'p', update: announce('c1') });
    }
    expect(subagentRouting(v1Without, 'p', tagged)).to.equal(undefined);
    for (const kind of ['subagent_update', 'session_message', 'session_message_chunk']) expect(subagentRouting(v1Without, 'p', { sessionUpdate: kind } as unknown as SessionUpdate)).to.equal(undefined);
    expect(subagentRouting(v1Without, 'p', chunk('own'))).to.deep.equal({ sessionId: 'p', update: chunk('own') });
  });

  it('the agent is told subagents for a v2 editor and for a v1 editor that asked (an object), not otherwise', () => {
    expect(capabilitiesForAgent({ protocolVersion: 2, clientCapabilities: { terminal: false } })).to.deep.equal({ terminal: false, subagents: {} });
    expect(capabilitiesForAgent({ protocolVersion: 1, clientCapabilities: { subagents: { _meta: { x: 1 } } } })).to.deep.equal({ subagents: { _meta: { x: 1 } } });
    expect(capabilitiesForAgent({ protocolVersion: 1, clientCapabilities: { terminal: true } })).to.deep.equal({ terminal: true });
    expect(asksForSubagents({ protocolVersion: 1, clientCapabilities: { subagents: true } })).to.equal(false);
    expect(asksForSubagents(undefined)).to.equal(false);
    expect(capabilitiesForAgent(undefined)).to.deep.equal({});
  });
});
