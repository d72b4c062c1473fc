/**
 * What the Claude Code and Codex session adapters tell the hang watchdog (`port.busy`), as
 * the recorded transcripts unfold: the agent owes output during the handshake and the turn,
 * owes nothing while a permission answer is awaited, and a tool runs from Claude's `tool_use`
 * to its `tool_result` (Codex: `item/started` to `item/completed` of the command). The
 * machines are driven with the recorded lines (spec/fixtures), no process: the facts are
 * the session's, derived from its context by the CLI-session skeleton.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef, type AnyStateMachine } from 'xstate';
import type { SessionAdapterOutput } from '../../src/adapters/adapter.js';
import { claudeSessionMachine } from '../../src/adapters/claude/adapter.js';
import { codexSessionMachine } from '../../src/adapters/codex/adapter.js';
import { HANDSHAKE_TAG } from '../../src/adapters/cli-session.js';
import { eventContext } from './native-driver.js';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));
const read = (name: string) => readFileSync(`${fixtures}${name}`, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { dir: string; msg: Record<string, unknown> });

/** A session machine, started, with what it told its port. */
function drive(machine: AnyStateMachine, input?: unknown) {
  const actor = createActor(machine, input === undefined ? {} : { input }).start();
  const outputs: SessionAdapterOutput[] = [];
  actor.on('*', (output: SessionAdapterOutput) => outputs.push(output));
  const facts = () => outputs.filter((output) => output.type === 'port.busy').map((output) => (output.busy ? (output.toolRunning ? 'tool' : 'owes') : 'idle'));
  return { actor, outputs, facts };
}

/** Starts a Claude session and answers its initialize with the transcript's recorded answer (given the id the session wrote). */
function claudeHandshake(actor: AnyActorRef, outputs: readonly SessionAdapterOutput[], lines: ReturnType<typeof read>): void {
  actor.send({ type: 'adapter.start', requestId: 'new', sessionId: 's1', params: { cwd: '/tmp', mcpServers: [] }, context: eventContext });
  actor.send({ type: 'port.started', pid: 1, restarts: 0 });
  const initId = (outputs.find((output) => output.type === 'port.write')?.message as { request_id: string }).request_id;
  const initAnswer = lines.find((line) => line.dir === 'out' && line.msg.type === 'control_response')?.msg as { response: Record<string, unknown> };
  actor.send({ type: 'native.message', message: { ...initAnswer, response: { ...initAnswer.response, request_id: initId } } });
}

describe('what the session adapters tell the hang watchdog', () => {
  it('Claude Code: owes during the handshake and the turn, idle while a permission is asked, a tool from tool_use to tool_result', () => {
    const { actor, outputs, facts } = drive(claudeSessionMachine);
    const lines = read('claude-stream-json-tool-write-permission-allow.transcript.ndjson');
    claudeHandshake(actor, outputs, lines);
    expect(facts()).to.deep.equal(['owes', 'idle']);
    actor.send({ type: 'session.prompt', requestId: 'p1', method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'write it' }] }, context: eventContext });
    const printed = lines.filter((line) => line.dir === 'out' && line.msg.type !== 'control_response').map((line) => line.msg);
    for (const message of printed) {
      actor.send({ type: 'native.message', message });
      const permission = outputs.find((output) => output.type === 'acp.clientRequest');
      if (permission?.type === 'acp.clientRequest' && !outputs.some((output) => output.type === 'port.write' && JSON.stringify(output.message).includes('"behavior":"allow"'))) {
        actor.send({ type: 'client.response', key: permission.key, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
      }
    }
    expect(outputs.find((output) => output.type === 'acp.respond' && output.requestId === 'p1')).to.deep.include({ result: { stopReason: 'end_turn' } });
    // handshake, ready, the prompt, the Write tool_use (a tool runs), its permission asked,
    // answered (the tool runs), its tool_result (owes the rest of the turn), the result.
    expect(facts()).to.deep.equal(['owes', 'idle', 'owes', 'tool', 'idle', 'tool', 'owes', 'idle']);
    actor.stop();
  });

  it('Claude Code: the CLI exits mid-tool (--on-crash fail): the next CLI is told nothing until its own handshake, and no tool runs any more', () => {
    const { actor, outputs, facts } = drive(claudeSessionMachine, { crash: { onCrash: 'fail' } });
    const lines = read('claude-stream-json-tool-bash-readonly.transcript.ndjson');
    claudeHandshake(actor, outputs, lines);
    actor.send({ type: 'session.prompt', requestId: 'p1', method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'TOOL:bash please' }] }, context: eventContext });
    const printed = lines.filter((line) => line.dir === 'out' && line.msg.type !== 'control_response').map((line) => line.msg);
    const toolUse = printed.findIndex((message) => JSON.stringify(message).includes('"type":"tool_use"') && message.type === 'assistant');
    for (const message of printed.slice(0, toolUse + 1)) actor.send({ type: 'native.message', message });
    expect(facts().at(-1)).to.equal('tool');
    actor.send({ type: 'port.exited', exit: { reason: { kind: 'signaled', signal: 'SIGKILL' }, command: ['claude'], pid: 1, durationMs: 1, stderrTail: '', linesIn: 1, nonJsonLines: 0 } });
    expect(outputs.find((output) => output.type === 'acp.error' && output.requestId === 'p1')).to.not.equal(undefined);
    const told = facts().length;
    actor.send({ type: 'port.started', pid: 2, restarts: 1 });
    expect(facts().slice(told)).to.deep.equal(['owes']); // the new CLI's handshake, no tool
    actor.stop();
  });

  it('Claude Code: the handshake is the state (tagged cli.handshake), no flag in the context; a permission asked tells the port the same as the passthrough does (neither busy nor a tool)', () => {
    const { actor, outputs } = drive(claudeSessionMachine);
    const lines = read('claude-stream-json-tool-write-permission-allow.transcript.ndjson');
    expect(actor.getSnapshot().hasTag(HANDSHAKE_TAG)).to.equal(false);
    actor.send({ type: 'adapter.start', requestId: 'new', sessionId: 's1', params: { cwd: '/tmp', mcpServers: [] }, context: eventContext });
    actor.send({ type: 'port.started', pid: 1, restarts: 0 });
    expect(actor.getSnapshot().hasTag(HANDSHAKE_TAG), 'in the handshake').to.equal(true);
    expect(actor.getSnapshot().context).to.not.have.property('handshaking');
    const initId = (outputs.find((output) => output.type === 'port.write')?.message as { request_id: string }).request_id;
    const initAnswer = lines.find((line) => line.dir === 'out' && line.msg.type === 'control_response')?.msg as { response: Record<string, unknown> };
    actor.send({ type: 'native.message', message: { ...initAnswer, response: { ...initAnswer.response, request_id: initId } } });
    expect(actor.getSnapshot().hasTag(HANDSHAKE_TAG), 'ready').to.equal(false);
    actor.send({ type: 'session.prompt', requestId: 'p1', method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'write it' }] }, context: eventContext });
    const printed = lines.filter((line) => line.dir === 'out' && line.msg.type !== 'control_response').map((line) => line.msg);
    for (const message of printed) {
      actor.send({ type: 'native.message', message });
      if (outputs.some((output) => output.type === 'acp.clientRequest')) break;
    }
    expect(outputs.filter((output) => output.type === 'port.busy').at(-1)).to.deep.equal({ type: 'port.busy', busy: false, toolRunning: false, turnOpen: true });
    // The next CLI exits mid-handshake: out of the handshake (the dead port is told nothing more).
    actor.send({ type: 'port.exited', exit: { reason: { kind: 'signaled', signal: 'SIGKILL' }, command: ['claude'], pid: 1, durationMs: 1, stderrTail: '', linesIn: 1, nonJsonLines: 0 } });
    actor.send({ type: 'port.started', pid: 2, restarts: 1 });
    expect(actor.getSnapshot().hasTag(HANDSHAKE_TAG)).to.equal(true);
    actor.send({ type: 'port.exited', exit: { reason: { kind: 'signaled', signal: 'SIGKILL' }, command: ['claude'], pid: 2, durationMs: 1, stderrTail: '', linesIn: 0, nonJsonLines: 0 } });
    expect(actor.getSnapshot().hasTag(HANDSHAKE_TAG)).to.equal(false);
    expect(outputs.filter((output) => output.type === 'port.busy').at(-1)).to.deep.equal({ type: 'port.busy', busy: true, toolRunning: false, turnOpen: true });
    actor.stop();
  });

  it('Codex: owes during the handshake and the turn, idle while the approval is asked, a tool from item/started to item/completed of the command', () => {
    const { actor, outputs, facts } = drive(codexSessionMachine);
    const lines = read('codex-app-server-tool-approval.ndjson');
    actor.send({ type: 'adapter.start', requestId: 'new', sessionId: 's1', params: { cwd: '/tmp', mcpServers: [] }, context: eventContext });
    actor.send({ type: 'port.started', pid: 1, restarts: 0 });
    // Replay: each recorded answer gets the id of the request the session just wrote.
    const written = () => outputs.filter((output) => output.type === 'port.write').map((output) => output.message as { id?: number; method?: string });
    let answered = false;
    for (const line of lines) {
      if (line.dir !== 'recv') continue;
      const message = line.msg as { id?: number; method?: string; result?: unknown; error?: unknown };
      if (message.method === undefined && message.id !== undefined) {
        // The session waits for each answer before its next request: the answer is to the last one written.
        const requests = written().filter((request) => request.id !== undefined && request.method !== undefined);
        actor.send({ type: 'native.message', message: { ...message, id: requests.at(-1)?.id } });
      } else {
        actor.send({ type: 'native.message', message });
      }
      if (actor.getSnapshot().value === 'ready' && !answered) {
        answered = true;
        actor.send({ type: 'session.prompt', requestId: 'p1', method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'run it' }] }, context: eventContext });
      }
      const approval = outputs.find((output) => output.type === 'acp.clientRequest');
      if (approval?.type === 'acp.clientRequest' && !outputs.some((output) => output.type === 'port.write' && JSON.stringify(output.message).includes('"decision"'))) {
        actor.send({ type: 'client.response', key: approval.key, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
      }
    }
    expect(outputs.find((output) => output.type === 'acp.respond' && output.requestId === 'p1')).to.deep.include({ result: { stopReason: 'end_turn' } });
    // handshake, ready, the turn, the command item started (a tool runs), its approval asked,
    // approved (the command runs), the item completed (owes the rest of the turn), turn/completed.
    expect(facts()).to.deep.equal(['owes', 'idle', 'owes', 'tool', 'idle', 'tool', 'owes', 'idle']);
    actor.stop();
  });

  /** A Claude turn of tool-bash-permission-partial up to its permission request (the Bash tool_use printed: a tool runs). */
  function claudeAskingPermission() {
    const driven = drive(claudeSessionMachine);
    const lines = read('claude-stream-json-tool-bash-permission-partial.transcript.ndjson');
    claudeHandshake(driven.actor, driven.outputs, lines);
    driven.actor.send({ type: 'session.prompt', requestId: 'p1', method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'write the file' }] }, context: eventContext });
    const printed = lines.filter((line) => line.dir === 'out' && line.msg.type !== 'control_response').map((line) => line.msg);
    const asked = printed.findIndex((message) => message.type === 'control_request');
    for (const message of printed.slice(0, asked + 1)) driven.actor.send({ type: 'native.message', message });
    const permission = driven.outputs.find((output) => output.type === 'acp.clientRequest');
    expect(permission?.type).to.equal('acp.clientRequest');
    return { ...driven, key: (permission as { key: string }).key, rest: printed.slice(asked + 1) };
  }

  for (const answer of ['allow', 'cancelled'] as const) {
    it(`Claude Code: a turn cancelled after its permission was answered (${answer}): the CLI owes the turn's end, its tool no longer excuses silence (the soak's frozen CLI)`, () => {
      const { actor, facts, key } = claudeAskingPermission();
      expect(facts().at(-1)).to.equal('idle');
      const outcome = answer === 'allow' ? { outcome: 'selected', optionId: 'allow' } : { outcome: 'cancelled' };
      if (answer === 'allow') {
        actor.send({ type: 'client.response', key, result: { outcome } });
        expect(facts().at(-1)).to.equal('tool');
      }
      actor.send({ type: 'session.cancel', sessionId: 's1', requestId: 'p1', context: eventContext });
      // The host answers a permission still asked `cancelled` itself (host/agent/turns.ts).
      if (answer === 'cancelled') actor.send({ type: 'client.response', key, result: { outcome } });
      expect(facts().at(-1)).to.equal('owes');
      actor.stop();
    });
  }

  it('Claude Code: a prompt that comes while a cancelled turn is still in flight (its grace ran out) waits, and is sent when that turn ends', () => {
    const { actor, outputs, key, rest } = claudeAskingPermission();
    actor.send({ type: 'client.response', key, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
    actor.send({ type: 'session.cancel', sessionId: 's1', requestId: 'p1', context: eventContext });
    const users = () => outputs.filter((output) => output.type === 'port.write' && (output.message as { type?: string }).type === 'user').length;
    expect(users()).to.equal(1);
    actor.send({ type: 'session.prompt', requestId: 'p2', method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'again' }] }, context: eventContext });
    expect(users()).to.equal(1); // the CLI is still in the old turn
    for (const message of rest) actor.send({ type: 'native.message', message });
    expect(outputs.find((output) => output.type === 'acp.respond' && output.requestId === 'p1')).to.deep.include({ result: { stopReason: 'cancelled' } });
    expect(users()).to.equal(2);
    expect(actor.getSnapshot().value).to.equal('prompting');
    actor.stop();
  });

  it('Claude Code: that waiting prompt survives the CLI exiting (the old turn fails): the restarted CLI gets it after its handshake; cancelled, it ends at once', () => {
    const { actor, outputs, key } = claudeAskingPermission();
    actor.send({ type: 'client.response', key, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
    actor.send({ type: 'session.cancel', sessionId: 's1', requestId: 'p1', context: eventContext });
    actor.send({ type: 'session.prompt', requestId: 'p2', method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'again' }] }, context: eventContext });
    actor.send({ type: 'port.exited', exit: { reason: { kind: 'signaled', signal: 'SIGKILL' }, command: ['claude'], pid: 1, durationMs: 1, stderrTail: '', linesIn: 1, nonJsonLines: 0 } });
    expect(outputs.find((output) => output.type === 'acp.error' && output.requestId === 'p1')).to.not.equal(undefined);
    expect(outputs.some((output) => 'requestId' in output && output.requestId === 'p2')).to.equal(false);
    const before = outputs.length;
    actor.send({ type: 'port.started', pid: 2, restarts: 1 });
    const initId = (outputs.slice(before).find((output) => output.type === 'port.write')?.message as { request_id: string }).request_id;
    actor.send({ type: 'native.message', message: { type: 'control_response', response: { subtype: 'success', request_id: initId, response: {} } } });
    const user = outputs.slice(before).find((output) => output.type === 'port.write' && (output.message as { type?: string }).type === 'user');
    expect(user, 'the waiting prompt sent to the restarted CLI').to.not.equal(undefined);
    actor.stop();
    // And a cancel of the waiting prompt (not of the old turn) answers it `cancelled` at once.
    const second = claudeAskingPermission();
    second.actor.send({ type: 'session.cancel', sessionId: 's1', requestId: 'p1', context: eventContext });
    second.actor.send({ type: 'session.prompt', requestId: 'p2', method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'again' }] }, context: eventContext });
    second.actor.send({ type: 'session.cancel', sessionId: 's1', requestId: 'p2', context: eventContext });
    expect(second.outputs.find((output) => output.type === 'acp.respond' && output.requestId === 'p2')).to.deep.include({ result: { stopReason: 'cancelled' } });
    second.actor.stop();
  });
});
