/**
 * The client-side faults of the ACP Remote conformance list (issue 31), injected at random
 * with a printed seed between a client and a real `warden serve` (SQLite store, demo agent):
 * a WebSocket proxy (spec/support/ws-fault-proxy.ts) drops a prompt before the daemon gets it,
 * loses the daemon's answer after it did the work, duplicates a prompt, leaves a connection
 * half dead (nothing back to the client), pauses the client's reading, loses or duplicates the
 * client's answer to a permission request; the walk also kills the daemon with SIGKILL mid-turn
 * and starts it again on the same store.
 *
 * The client is what a careful client of today's dialect does: every prompt carries an
 * idempotency key; a connection that is cut, or silent while a prompt is owed, is dropped; the
 * next one resumes the session after the last seq it saw (`_meta["acp-warden/after"]`) and sends
 * the prompt again under the same key. After every run, against the journal as the store holds
 * it (the proof):
 * - each key has one prompt entry and one turn end (no prompt applied twice, none lost);
 * - each prompt's answer is the journal's end of its turn (nothing answered then lost);
 * - each connection got every journaled update after its cursor once, in order, and nothing
 *   the journal does not hold (spec/support/delivery-invariant.ts).
 * Replay one run: CLIENT_FAULTS_SEED=<seed> CLIENT_FAULTS_RUNS=1; more: CLIENT_FAULTS_RUNS, CLIENT_FAULTS_PROMPTS.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { seededRandom } from '../../src/journal/seeded-random.js';
import { describeViolations, settledViolations, type ConnectionRecord } from '../support/delivery-invariant.js';
import { freePort } from '../support/free-port.js';
import { sqliteJournal } from '../support/journal-rows.js';
import { initializeParams, startServe, type Frame, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';
import { startWsFaultProxy, type WsFaultProxy } from '../support/ws-fault-proxy.js';

const baseSeed = Number(process.env.CLIENT_FAULTS_SEED ?? 3101);
const runs = Number(process.env.CLIENT_FAULTS_RUNS ?? 2);
const promptsPerRun = Number(process.env.CLIENT_FAULTS_PROMPTS ?? 8);
const faults = ['none', 'drop_before_accept', 'drop_after_accept', 'duplicate', 'half_dead', 'paused_consumer', 'node_restart', 'permission_answer_lost', 'permission_answer_duplicated'] as const;
type Fault = (typeof faults)[number];
const keyMeta = 'acp-warden/idempotencyKey';
const seqMeta = 'acp-warden/seq';
const afterMeta = 'acp-warden/after';
/** A connection silent this long while a prompt is owed is taken for dead (the demo agent writes every few ms). */
const silenceMs = 3_000;

/** Why a request got no answer on its connection. */
class ConnectionLost extends Error {}

/** One connection of the walking client, recorded for the delivery check. */
interface Connection {
  readonly socket: WebSocket;
  readonly record: ConnectionRecord & { frames: Frame[]; prompts: string[]; retried: string[]; following: boolean };
  readonly closed: Promise<void>;
  lastFrameAt: number;
}

describe('warden serve under client-side faults (drop before and after accept, duplicate, half-dead, paused consumer, kill -9), seeded (issue 31)', function () {
  this.timeout(300_000);
  const launched: ChildProcess[] = [];
  const sockets: WebSocket[] = [];
  let state: string;
  let proxy: WsFaultProxy | undefined;

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-client-faults-')));
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await proxy?.close();
    proxy = undefined;
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  for (let run = 0; run < runs; run++) {
    const seed = baseSeed + run;
    it(`seed ${seed}: ${promptsPerRun} keyed prompts, a fault drawn for each; one prompt entry and one end per key, each answer the journal's, every update once and in order per connection (replay: CLIENT_FAULTS_SEED=${seed} CLIENT_FAULTS_RUNS=1)`, async () => {
      const random = seededRandom(seed);
      const store = join(state, 'journal.sqlite');
      const cwd = join(state, 'project');
      mkdirSync(cwd);
      const port = await freePort();
      const start = () => startServe(state, ['--listen', `127.0.0.1:${port}`, '--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=2'], launched);
      let daemon: ServeDaemon = await start();
      proxy = await startWsFaultProxy(daemon.url);
      const through = proxy;

      const connections: Connection[] = [];
      let permissionsAsked = 0;
      let sessionId = '';
      let nextId = 1;
      const lastSeq = () => Math.max(0, ...connections.flatMap((connection) => connection.record.frames.map((frame) => (frame.params?._meta?.[seqMeta] as number | undefined) ?? 0)));

      const open = async (): Promise<Connection> => {
        for (const previous of connections) previous.record.following = false;
        const socket = new WebSocket(through.url, { headers: { Authorization: `Bearer ${daemon.token}` } });
        sockets.push(socket);
        const record = { client: `walker, connection ${connections.length + 1}`, sessionId, after: lastSeq(), frames: [] as Frame[], prompts: [] as string[], retried: [] as string[], following: true };
        const connection: Connection = { socket, record, closed: new Promise((resolve) => socket.once('close', () => resolve())), lastFrameAt: Date.now() };
        socket.on('message', (data: Buffer) => {
          connection.lastFrameAt = Date.now();
          const frame = JSON.parse(data.toString('utf8')) as Frame;
          record.frames.push(frame);
          // The demo tool's permission: allowed once, by whichever connection is asked.
          if (frame.method === 'session/request_permission' && frame.id !== undefined) {
            permissionsAsked++;
            socket.send(JSON.stringify({ jsonrpc: '2.0', id: frame.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } }));
          }
        });
        socket.on('error', () => undefined);
        await new Promise<void>((resolve, reject) => {
          socket.once('open', () => resolve());
          socket.once('close', () => reject(new ConnectionLost('closed before it opened')));
        });
        connections.push(connection);
        return connection;
      };
      /** Sends a request and waits for its answer; throws ConnectionLost when the connection is cut or stays silent. */
      const request = async (connection: Connection, method: string, params: Record<string, unknown>): Promise<Frame> => {
        const id = nextId++;
        connection.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
        connection.lastFrameAt = Date.now();
        for (;;) {
          const answer = connection.record.frames.find((frame) => frame.id === id && frame.method === undefined);
          if (answer) return answer;
          if (connection.socket.readyState !== WebSocket.OPEN) throw new ConnectionLost(`the connection closed before the answer to ${method}`);
          if (Date.now() - connection.lastFrameAt > silenceMs) {
            connection.socket.terminate();
            throw new ConnectionLost(`nothing came for ${silenceMs} ms while ${method} was owed`);
          }
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };
      /** A new connection attached to the session after the last seq seen (retried while the daemon restarts). */
      const reattach = async (): Promise<Connection> => {
        for (let attempt = 0; ; attempt++) {
          try {
            const connection = await open();
            const initialized = await request(connection, 'initialize', initializeParams('client-faults-walker'));
            expect(initialized.error, JSON.stringify(initialized)).to.equal(undefined);
            const resumed = await request(connection, 'session/resume', { sessionId, cwd, mcpServers: [], _meta: { [afterMeta]: connection.record.after } });
            expect(resumed.error, JSON.stringify(resumed)).to.equal(undefined);
            return connection;
          } catch (error) {
            if (!(error instanceof ConnectionLost) || attempt > 100) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      };

      let connection = await open();
      await request(connection, 'initialize', initializeParams('client-faults-walker'));
      sessionId = ((await request(connection, 'session/new', { cwd, mcpServers: [] })).result as { sessionId: string }).sessionId;
      for (const each of connections) (each.record as { sessionId: string }).sessionId = sessionId;

      const drawn: Fault[] = [];
      const answers = new Map<string, Frame>();
      for (let index = 0; index < promptsPerRun; index++) {
        const fault = faults[Math.floor(random() * faults.length)] as Fault;
        drawn.push(fault);
        const key = `key-${seed}-${index}`;
        // A prompt naming the tool makes the demo agent ask permission first (its mode is ask); a permission fault needs one.
        const text = fault.startsWith('permission_') || random() < 0.3 ? `tool ${index}` : `hello ${index}`;
        const params = { sessionId, prompt: [{ type: 'text', text }], _meta: { [keyMeta]: key } };
        const isPrompt = (message: Record<string, unknown>) => message.method === 'session/prompt';
        if (fault === 'drop_before_accept') through.dropBeforeAccept(isPrompt);
        if (fault === 'duplicate') through.duplicate(isPrompt);
        const isPermissionAnswer = (message: Record<string, unknown>) => message.method === undefined && (message.result as { outcome?: unknown } | undefined)?.outcome !== undefined;
        if (fault === 'permission_answer_lost') through.dropBeforeAccept(isPermissionAnswer);
        if (fault === 'permission_answer_duplicated') through.duplicate(isPermissionAnswer);
        // The ids of this prompt's attempts: the fault hits the first answer to any of them (an attempt may be lost to another fault first).
        const attemptIds = new Set<number>();
        if (fault === 'drop_after_accept') through.dropAfterAccept((message) => attemptIds.has(message.id as number) && message.method === undefined);
        if (fault === 'paused_consumer') through.pauseConsumer(200 + Math.floor(random() * 1_000));
        const restartAfterMs = Math.floor(random() * 150);
        for (let attempt = 0; ; attempt++) {
          (attempt === 0 ? connection.record.prompts : connection.record.retried).push(text);
          attemptIds.add(nextId);
          const answer = request(connection, 'session/prompt', params);
          if (attempt === 0 && fault === 'half_dead') through.halfDead();
          if (attempt === 0 && fault === 'node_restart') {
            await new Promise((resolve) => setTimeout(resolve, restartAfterMs));
            daemon.process.kill('SIGKILL');
            await daemon.exited;
            daemon = await start();
          }
          try {
            answers.set(key, await answer);
            break;
          } catch (error) {
            if (!(error instanceof ConnectionLost) || attempt > 5) throw error;
            connection = await reattach();
          }
        }
      }
      const acted = (action: string) => through.trace.filter((entry) => entry.action === action).length;
      console.log(`      seed ${seed}: faults ${drawn.join(', ')}; ${connections.length} connections; ${permissionsAsked} permissions asked; proxy: ${acted('dropped')} dropped before accept, ${acted('cut')} after, ${acted('duplicated')} duplicated, ${acted('held')} held on half-dead paths`);
      if (process.env.CLIENT_FAULTS_TRACE) console.log(through.trace.map((entry) => `${entry.connection} ${entry.direction} ${entry.action} ${entry.message.slice(0, 160)}`).filter((line) => !line.includes('agent_message_chunk')).join('\n'));
      // Each fault drawn did happen (a fault that never fires proves nothing).
      expect(acted('dropped'), 'prompts and permission answers dropped before accept').to.equal(drawn.filter((fault) => fault === 'drop_before_accept' || fault === 'permission_answer_lost').length);
      expect(acted('cut'), 'answers lost after accept').to.equal(drawn.filter((fault) => fault === 'drop_after_accept').length);
      expect(acted('duplicated'), 'prompts and permission answers duplicated').to.equal(drawn.filter((fault) => fault === 'duplicate' || fault === 'permission_answer_duplicated').length);

      // The journal, read from the store by the test itself.
      const journal = sqliteJournal(store, [sessionId]).get(sessionId) ?? [];
      const keyOf = (entry: unknown) => (entry as { idempotencyKey?: string }).idempotencyKey;
      for (let index = 0; index < promptsPerRun; index++) {
        const key = `key-${seed}-${index}`;
        const prompts = journal.filter((row) => row.entry.kind === 'prompt' && keyOf(row.entry) === key);
        expect(prompts, `${key} (${drawn[index]}): prompt entries`).to.have.length(1);
        const promptSeq = prompts[0]!.seq;
        const next = journal.find((row) => row.seq > promptSeq && row.entry.kind === 'prompt')?.seq ?? Infinity;
        const ends = journal.filter((row) => row.seq > promptSeq && row.seq < next && (row.entry.kind === 'stop' || row.entry.kind === 'error'));
        expect(ends, `${key} (${drawn[index]}): turn ends`).to.have.length(1);
        const answer = answers.get(key)!;
        const end = ends[0]!.entry as { kind: string; stopReason?: string; error?: { code: number; data?: { reason?: string } } };
        if (end.kind === 'stop') expect(answer.result, `${key} (${drawn[index]}): ${JSON.stringify(answer)}`).to.deep.equal({ stopReason: end.stopReason, _meta: { 'acp-warden/promptSeq': promptSeq } });
        else expect(answer.error, `${key} (${drawn[index]}): ${JSON.stringify(answer)}`).to.deep.include({ code: end.error?.code });
      }
      expect(journal.filter((row) => row.entry.kind === 'prompt'), 'every prompt entry has a key of this walk').to.have.length(promptsPerRun);
      // No interaction answered twice: at most one permission answer on record per turn.
      const prompts = journal.filter((row) => row.entry.kind === 'prompt');
      prompts.forEach((prompt, index) => {
        const until = prompts[index + 1]?.seq ?? Infinity;
        const answered = journal.filter((row) => row.seq > prompt.seq && row.seq < until && row.entry.kind === 'permission');
        expect(answered.length, `permission answers in the turn of seq ${prompt.seq}`).to.be.at.most(1);
      });

      const violations = await settledViolations(
        () => connections.map((each) => each.record),
        async (ids) => sqliteJournal(store, ids),
        10_000,
      );
      expect(violations, describeViolations(violations)).to.deep.equal([]);
    });
  }
});
