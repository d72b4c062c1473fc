/**
 * The client-side fault walk (issue 31's conformance list, the client half), shared by the
 * one-host spec (spec/serve/client-faults.spec.ts) and the cluster's
 * (spec/cluster/client-faults-cluster.spec.ts): a careful client of today's dialect drives one
 * session through a {@link WsFaultProxy}, one fault drawn per prompt from the seed, and the run
 * is then checked against the journal as the store holds it:
 * - each key has one prompt entry and one turn end (no prompt applied twice, none lost);
 * - each prompt's answer is the journal's end of its turn (nothing answered then lost);
 * - at most one permission answer on record per turn (no interaction answered twice);
 * - each connection got every journaled update after its cursor once, in order, and nothing
 *   the journal does not hold (delivery-invariant.ts);
 * - each fault drawn did happen (the proxy's trace).
 *
 * The client: every prompt under an idempotency key; a connection cut, or silent while an
 * answer is owed, or whose prompt is refused `not_attached` / `session_owned` (nothing done: try
 * again), is dropped; the next resumes the session after the last seq seen
 * (`_meta["acp-warden/after"]`) and sends the prompt again under its key; a permission request
 * is allowed once by whichever connection is asked.
 */
import { expect } from 'chai';
import { openLink, type ClientLink } from './client-links.js';
import { seededRandom } from '../../src/journal/seeded-random.js';
import { describeViolations, settledViolations, type ConnectionRecord, type JournalRow } from './delivery-invariant.js';
import { cursorKeys, initializeParams, type Frame } from './serve-daemon.js';
import type { HttpFaultProxy } from './http-fault-proxy.js';
import type { WsFaultProxy } from './ws-fault-proxy.js';

/** The faults a walk draws from, one per prompt. */
export const clientFaults = ['none', 'drop_before_accept', 'drop_after_accept', 'duplicate', 'half_dead', 'paused_consumer', 'node_restart', 'permission_answer_lost', 'permission_answer_duplicated'] as const;
/** One of {@link clientFaults}. */
export type ClientFault = (typeof clientFaults)[number];

const keyMeta = 'acp-warden/idempotencyKey';
/**
 * A connection silent this long while an answer is owed is taken for dead (the demo agent writes
 * every few ms). A healthy one taken for dead under load costs a reconnect, never a wrong verdict:
 * the prompt is resent under its key. CLIENT_FAULTS_SILENCE_MS raises it on a slow machine.
 */
const silenceMs = Number(process.env.CLIENT_FAULTS_SILENCE_MS ?? 3_000);

/** `data.reason`s of a refused prompt that a client answers by attaching again and resending (docs/serve.md, docs/cluster.md). */
const retryReasons = new Set(['not_attached', 'session_owned']);

/** Why a request got no answer on its connection. */
class ConnectionLost extends Error {}

/** One connection of the walking client, recorded for the delivery check. */
interface Connection {
  readonly link: ClientLink;
  readonly record: ConnectionRecord & { frames: Frame[]; prompts: string[]; retried: string[]; following: boolean };
  lastFrameAt: number;
}

/** Where a walk runs: one daemon or a cluster, behind the proxy. */
export interface ClientFaultWorld {
  /** Shown in the run's line (`3 hosts`). */
  readonly name?: string;
  /** The session's working directory (exists). */
  readonly cwd: string;
  /** The bearer token of the daemon(s) (read when each connection opens). */
  token(): string;
  /** The `node_restart` fault: kill -9 a daemon (the session's owner, for a cluster) and start it again. */
  killAndRestart(sessionId: string, random: () => number): Promise<void>;
  /** Before each new connection (a cluster points the proxy at a host drawn at random). */
  beforeReconnect?(random: () => number): void;
  /** A refused `session/resume` worth trying again (a host whose lease has not run out yet holds the session). */
  retryableResume?(error: NonNullable<Frame['error']>): boolean;
  /** The session's entries as the store holds them, read by the test itself. */
  journal(sessionIds: readonly string[]): Promise<ReadonlyMap<string, readonly JournalRow[]>>;
}

/** Options of {@link walkClientFaults}. */
export interface ClientFaultWalk {
  readonly seed: number;
  /** Prompts in the walk (one fault each). */
  readonly prompts: number;
  /** In front of the daemon(s); the walk's clients connect to it. */
  readonly proxy: WsFaultProxy | HttpFaultProxy;
  /** How the client connects: a WebSocket (default), or Streamable HTTP (POSTs and the connection's SSE stream). */
  readonly transport?: 'websocket' | 'http';
  readonly world: ClientFaultWorld;
}

/** Runs one walk and asserts everything above (chai); resolves when the run passed. */
export async function walkClientFaults(options: ClientFaultWalk): Promise<void> {
  const { seed, prompts: promptsPerRun, proxy: through, world } = options;
  const links: ClientLink[] = [];
  const random = seededRandom(seed);
  // Hosts are drawn from a stream of their own: how many reconnects a run needs depends on timing, and must not shift the faults drawn.
  const placement = seededRandom(seed ^ 0x5bd1e995);
  try {
    await walk();
  } finally {
    for (const link of links) link.cut();
  }

  async function walk(): Promise<void> {
  const { cwd } = world;

  const connections: Connection[] = [];
  let permissionsAsked = 0;
  let sessionId = '';
  let nextId = 1;
  const lastSeq = () => Math.max(0, ...connections.flatMap((connection) => connection.record.frames.map((frame) => (frame.params?._meta?.[cursorKeys.seq] as number | undefined) ?? 0)));

  const open = async (): Promise<Connection> => {
    for (const previous of connections) previous.record.following = false;
    const record = { client: `walker, connection ${connections.length + 1}`, sessionId, after: lastSeq(), frames: [] as Frame[], prompts: [] as string[], retried: [] as string[], following: true };
    let connection: Connection | undefined;
    const link = await openLink(options.transport ?? 'websocket', through.url, world.token(), (frame) => {
      if (connection) connection.lastFrameAt = Date.now();
      record.frames.push(frame);
      // The demo tool's permission: allowed once, by whichever connection is asked.
      if (frame.method === 'session/request_permission' && frame.id !== undefined) {
        permissionsAsked++;
        link.send({ jsonrpc: '2.0', id: frame.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
      }
    });
    links.push(link);
    connection = { link, record, lastFrameAt: Date.now() };
    connections.push(connection);
    return connection;
  };
  /** Sends a request and waits for its answer; throws ConnectionLost when the connection is cut or stays silent. */
  const request = async (connection: Connection, method: string, params: Record<string, unknown>): Promise<Frame> => {
    const id = nextId++;
    connection.link.send({ jsonrpc: '2.0', id, method, params });
    connection.lastFrameAt = Date.now();
    for (;;) {
      const answer = connection.record.frames.find((frame) => frame.id === id && frame.method === undefined);
      if (answer) return answer;
      if (!connection.link.isOpen()) throw new ConnectionLost(`the connection closed before the answer to ${method}`);
      if (Date.now() - connection.lastFrameAt > silenceMs) {
        connection.link.cut();
        throw new ConnectionLost(`nothing came for ${silenceMs} ms while ${method} was owed`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  /** A new connection attached to the session after the last seq seen (retried while the daemon restarts). */
  const reattach = async (): Promise<Connection> => {
    for (let attempt = 0; ; attempt++) {
      try {
        world.beforeReconnect?.(placement);
        const connection = await open();
        const initialized = await request(connection, 'initialize', initializeParams('client-faults-walker'));
        expect(initialized.error, JSON.stringify(initialized)).to.equal(undefined);
        const resumed = await request(connection, 'session/resume', { sessionId, cwd, mcpServers: [], _meta: { [cursorKeys.after]: connection.record.after } });
        // A session another host still holds (its lease not run out yet) is taken on a later try.
        if (resumed.error && attempt < 300 && world.retryableResume?.(resumed.error)) {
          connection.link.cut();
          throw new ConnectionLost(`session/resume refused: ${resumed.error.message}`);
        }
        expect(resumed.error, JSON.stringify(resumed)).to.equal(undefined);
        return connection;
      } catch (error) {
        if (!(error instanceof ConnectionLost) || attempt > 300) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };

  let connection = await open();
  await request(connection, 'initialize', initializeParams('client-faults-walker'));
  sessionId = ((await request(connection, 'session/new', { cwd, mcpServers: [] })).result as { sessionId: string }).sessionId;
  for (const each of connections) (each.record as { sessionId: string }).sessionId = sessionId;

  const drawn: ClientFault[] = [];
  const answers = new Map<string, Frame>();
  for (let index = 0; index < promptsPerRun; index++) {
    const fault = clientFaults[Math.floor(random() * clientFaults.length)] as ClientFault;
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
        await world.killAndRestart(sessionId, placement);
      }
      try {
        const answered = await answer;
        // Refusals that say nothing was done and to try again: the connection lost its session (its host's
        // link to the owner went away), or the owner cannot be reached until its lease runs out.
        if (answered.error && retryReasons.has(answered.error.data?.reason ?? '')) {
          connection.link.cut();
          throw new ConnectionLost(`session/prompt refused: ${answered.error.message}`);
        }
        answers.set(key, answered);
        break;
      } catch (error) {
        if (!(error instanceof ConnectionLost) || attempt > 10) throw error;
        connection = await reattach();
      }
    }
  }
  const acted = (action: string) => through.trace.filter((entry) => entry.action === action).length;
  console.log(`      seed ${seed}${world.name ? ` (${world.name})` : ''}: faults ${drawn.join(', ')}; ${connections.length} connections; ${permissionsAsked} permissions asked; proxy: ${acted('dropped')} dropped before accept, ${acted('cut')} after, ${acted('duplicated')} duplicated, ${acted('held')} held on half-dead paths`);
  if (process.env.CLIENT_FAULTS_TRACE) console.log(through.trace.map((entry) => `${entry.connection} ${entry.direction} ${entry.action} ${entry.message.slice(0, 160)}`).filter((line) => !line.includes('agent_message_chunk')).join('\n'));
  // Each fault drawn did happen (a fault that never fires proves nothing).
  expect(acted('dropped'), 'prompts and permission answers dropped before accept').to.equal(drawn.filter((fault) => fault === 'drop_before_accept' || fault === 'permission_answer_lost').length);
  expect(acted('cut'), 'answers lost after accept').to.equal(drawn.filter((fault) => fault === 'drop_after_accept').length);
  expect(acted('duplicated'), 'prompts and permission answers duplicated').to.equal(drawn.filter((fault) => fault === 'duplicate' || fault === 'permission_answer_duplicated').length);
  // A half-dead path held something back each time (the prompt's own updates and answer at least).
  expect(acted('held'), 'messages held on half-dead paths').to.be.at.least(drawn.filter((fault) => fault === 'half_dead').length);

  // The journal, read from the store by the test itself.
  const journal = (await world.journal([sessionId])).get(sessionId) ?? [];
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
    (ids) => world.journal(ids),
    10_000,
  );
  expect(violations, describeViolations(violations)).to.deep.equal([]);
}
}
