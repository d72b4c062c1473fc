/**
 * What the ACP agent server closes while the editor's output is backed up: for a handler
 * that delivers from a journal (the host agent), the connection's delivery gate, so that its
 * subscriber pauses and the agents (the ports, behind the read gate) go on; for any other
 * handler, the read gate: with no journal to read back from, the agents must wait. In
 * process, over a memory pair whose agent end reports backpressure as stdio does.
 */
import { expect } from 'chai';
import { createActor, setup, type AnyActorLogic } from 'xstate';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import type { NativeAgent } from '../../src/protocol/native-agent.js';
import { createHostAgent } from '../../src/host/host-agent.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { createMemoryTransportPair, type Transport, type TransportSink } from '../../src/jsonrpc/index.js';
import { readGateOf } from '../../src/port/read-gate.js';
import { deliveryGateOf } from '../../src/session/subscriber.js';

/** The agent end of a memory pair, with a handle to say its output is backed up (or drained). */
function reportingPressure(transport: Transport): { transport: Transport; backedUp(value: boolean): void } {
  let sink: TransportSink | undefined;
  return {
    transport: {
      start: (target) => {
        sink = target;
        transport.start(target);
      },
      send: (message) => transport.send(message),
      close: () => transport.close(),
    },
    backedUp: (value) => sink?.backpressure?.(value),
  };
}

const plainAgent: NativeAgent = { logic: setup({}).createMachine({}) as AnyActorLogic, agentInfo: { name: 'plain', version: '0' } };

function serve(agent: NativeAgent) {
  const [, agentSide] = createMemoryTransportPair();
  const pressure = reportingPressure(agentSide);
  const server = createActor(agentServerLogic, { input: { transport: pressure.transport, agent } }).start();
  return { server, pressure, readGate: readGateOf(server.system), deliveryGate: deliveryGateOf(server.system) };
}

describe('ACP agent server: an editor whose output is backed up', () => {
  it('a handler without a journal: the read gate closes (its agents wait) until the output drained', () => {
    const { server, pressure, readGate, deliveryGate } = serve(plainAgent);
    try {
      pressure.backedUp(true);
      expect(readGate.open).to.equal(false);
      expect(deliveryGate.open).to.equal(true);
      pressure.backedUp(false);
      expect(readGate.open).to.equal(true);
    } finally {
      server.stop();
    }
  });

  it('the host agent (it delivers from its journal): only the delivery gate closes; the read gate, which its agents read behind, stays open', () => {
    const journal = sqliteJournal(':memory:');
    const host = createHostAgent({ defaultAgent: 'plain', resolve: () => plainAgent, journal });
    const { server, pressure, readGate, deliveryGate } = serve(host);
    try {
      pressure.backedUp(true);
      expect(deliveryGate.open).to.equal(false);
      expect(readGate.open, 'the agents go on while the editor is slow').to.equal(true);
      pressure.backedUp(false);
      expect(deliveryGate.open).to.equal(true);
    } finally {
      server.stop();
      journal.close();
    }
  });
});
