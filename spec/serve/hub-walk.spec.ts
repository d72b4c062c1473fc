/**
 * A seeded random walk over the connection hub (fast-check): 100 clients attach to three
 * sessions and detach at random while their controllers stream turns. Each attach resumes
 * from the last `seq` that client saw (its first attach loads the whole history). Checked
 * after every step and at the end, as the chaos walk checks its invariants:
 *
 * - within and across a client's connections, the seqs it receives for a session only grow
 *   (nothing twice, order kept);
 * - at the end, every client that ever attached has seen every journaled update of its
 *   session exactly once;
 * - every prompt request settled (answered, or failed because its connection went away).
 *
 * HUB_WALK_SEED replays a seed.
 */
import type { Journal } from '../../src/journal/journal.js';
import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { createHost, type Host, type ServeHub } from '../../src/runtime/host.js';
import { attachClient, type HubClient } from '../support/hub-client.js';

const seed = Number(process.env.HUB_WALK_SEED ?? 20261202);
const clientCount = 100;
const sessionCount = 3;

type Step =
  | { readonly kind: 'attach'; readonly client: number }
  | { readonly kind: 'detach'; readonly client: number }
  | { readonly kind: 'prompt'; readonly client: number }
  | { readonly kind: 'pause'; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('attach' as const), client: fc.nat(clientCount - 1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('detach' as const), client: fc.nat(clientCount - 1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('prompt' as const), client: fc.nat(clientCount - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('pause' as const), ms: fc.integer({ min: 1, max: 15 }) }) },
);

interface Walker {
  readonly sessionId: string;
  connection: HubClient | undefined;
  /** How many of the connection's updates were checked already. */
  checked: number;
  lastSeq: number | undefined;
  /** The seqs of `update` entries it saw (agent updates), in the order it saw them. */
  readonly updateSeqs: number[];
}

describe('connection hub: 100 clients attaching and detaching at random during streaming turns', function () {
  this.timeout(240_000);
  let dir: string;
  let host: Host | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-hub-walk-'));
  });
  afterEach(async () => {
    await host?.stop();
    host = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Takes in what the walker's connection received since last time: seqs must only grow. */
  const absorb = (walker: Walker, journalUpdates: (sessionId: string) => Set<number>) => {
    const connection = walker.connection;
    if (!connection) return;
    const fresh = connection.updates.slice(walker.checked);
    walker.checked = connection.updates.length;
    const updates = journalUpdates(walker.sessionId);
    for (const update of fresh) {
      if (update.sessionId !== walker.sessionId || update.seq === undefined) continue;
      // A prompt of one block, or a turn end: one update each; an agent update: one. Never a seq again.
      if (walker.lastSeq !== undefined && update.seq <= walker.lastSeq) throw new Error(`seq ${update.seq} after ${walker.lastSeq} on session ${walker.sessionId}`);
      walker.lastSeq = update.seq;
      if (updates.has(update.seq)) walker.updateSeqs.push(update.seq);
    }
  };

  it(`keeps every client's view complete, once and in order (seed ${seed})`, async () => {
    let runs = 0;
    const property = fc.asyncProperty(fc.array(step, { minLength: 120, maxLength: 160 }), async (steps) => {
      runs++;
      await host?.stop();
      host = createHost({ store: join(dir, `journal-${runs}.sqlite`), agents: { demo: demoAgent({ wordDelayMs: 1 }) } });
      const hub: ServeHub = host.hub({ unattended: { policy: 'deny', timeoutMs: 1000 }, idleTimeoutMs: 0 });
      const journal = host.journal as Journal;
      const journalUpdates = (sessionId: string) => new Set(journal.entries(sessionId).filter((record) => record.entry.kind === 'update').map((record) => record.seq));
      const setup = await attachClient(hub, 'setup');
      const sessions: string[] = [];
      for (let index = 0; index < sessionCount; index++) sessions.push(((await setup.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string }).sessionId);
      setup.close();
      const walkers: Walker[] = Array.from({ length: clientCount }, (_, index) => ({ sessionId: sessions[index % sessionCount] as string, connection: undefined, checked: 0, lastSeq: undefined, updateSeqs: [] }));
      const prompts: Array<Promise<unknown>> = [];
      const attachOne = async (walker: Walker, name: string) => {
        const connection = await attachClient(hub, name);
        walker.connection = connection;
        walker.checked = 0;
        if (walker.lastSeq === undefined) await connection.request('session/load', { sessionId: walker.sessionId, cwd: dir, mcpServers: [] });
        else await connection.request('session/resume', { sessionId: walker.sessionId, cwd: dir, _meta: { 'acp-warden/after': walker.lastSeq } });
      };
      for (const [index, next] of steps.entries()) {
        if (next.kind === 'pause') {
          await new Promise((resolve) => setTimeout(resolve, next.ms));
          continue;
        }
        const walker = walkers[next.client] as Walker;
        if (next.kind === 'attach' && !walker.connection) await attachOne(walker, `w${next.client}`);
        else if (next.kind === 'detach' && walker.connection) {
          absorb(walker, journalUpdates);
          walker.connection.close();
          walker.connection = undefined;
        } else if (next.kind === 'prompt') {
          // The controller of this client's session prompts (an observer's prompt is refused: the hub spec covers that).
          const controller = (await hub.sessions()).find((session) => session.sessionId === walker.sessionId)?.clients.find((client) => client.role === 'controller')?.peer;
          const prompter = controller === undefined ? undefined : walkers[Number(controller.slice(1))];
          if (prompter?.connection) prompts.push(prompter.connection.request('session/prompt', { sessionId: prompter.sessionId, prompt: [{ type: 'text', text: `step ${index}` }] }).then(() => 'answered', () => 'failed'));
        }
        for (const each of walkers) absorb(each, journalUpdates);
      }
      // Every prompt settles: answered, or failed with its connection.
      let timer: NodeJS.Timeout | undefined;
      const settled = await Promise.race([Promise.all(prompts), new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), 60_000)))]);
      clearTimeout(timer);
      expect(settled, 'every prompt settled').to.not.equal('timeout');
      const outcomes = settled as string[];
      // The walk streamed turns, and some of them lost their connection mid-turn (else it proved little).
      expect(outcomes.length, 'prompts sent').to.be.greaterThan(5);
      if (process.env.HUB_WALK_VERBOSE) process.stderr.write(`hub walk run ${runs}: ${outcomes.length} prompts, ${outcomes.filter((o) => o === 'failed').length} lost with their connection\n`);
      await hub.drain(60_000);
      // Everyone comes back once more from where it stood, and has then seen its whole session.
      for (const [index, walker] of walkers.entries()) {
        if (walker.lastSeq === undefined && !walker.connection) continue;
        if (walker.connection) {
          absorb(walker, journalUpdates);
          walker.connection.close();
        }
        await attachOne(walker, `w${index}`);
        absorb(walker, journalUpdates);
        expect(walker.updateSeqs, `client w${index}'s updates of ${walker.sessionId}`).to.deep.equal([...journalUpdates(walker.sessionId)]);
      }
      for (const walker of walkers) walker.connection?.close();
    });
    const details = await fc.check(property, { seed, numRuns: 3, endOnFailure: true });
    if (details.failed) throw new Error(`hub walk failed: HUB_WALK_SEED=${details.seed} (path ${details.counterexamplePath}): ${String(details.errorInstance)}`);
  });
});
