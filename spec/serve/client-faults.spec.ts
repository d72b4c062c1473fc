/**
 * The client-side faults of the ACP Remote conformance list (issue 31), injected at random
 * with a printed seed between a client and a real `warden serve` (SQLite store, demo agent):
 * a WebSocket proxy (spec/support/ws-fault-proxy.ts) drops a prompt before the daemon gets it,
 * loses the daemon's answer after it did the work, duplicates a prompt, leaves a connection
 * half dead (nothing back to the client), pauses the client's reading, loses or duplicates the
 * client's answer to a permission request; the walk also kills the daemon with SIGKILL mid-turn
 * and starts it again on the same store.
 *
 * The client and the checks after each run: spec/support/client-fault-walk.ts (one prompt
 * entry and one end per key, each answer the journal's, at most one permission answer a turn,
 * the delivery invariant per connection).
 * Replay one run: CLIENT_FAULTS_SEED=<seed> CLIENT_FAULTS_RUNS=1; more: CLIENT_FAULTS_RUNS, CLIENT_FAULTS_PROMPTS.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { walkClientFaults } from '../support/client-fault-walk.js';
import { freePort } from '../support/free-port.js';
import { sqliteJournal } from '../support/journal-rows.js';
import { startServe, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';
import { startHttpFaultProxy, type HttpFaultProxy } from '../support/http-fault-proxy.js';
import { startWsFaultProxy, type WsFaultProxy } from '../support/ws-fault-proxy.js';

const baseSeed = Number(process.env.CLIENT_FAULTS_SEED ?? 3101);
const runs = Number(process.env.CLIENT_FAULTS_RUNS ?? 2);
const promptsPerRun = Number(process.env.CLIENT_FAULTS_PROMPTS ?? 8);
/** Every second run also delays the daemon's journal calls by up to this many ms (seeded): replays then race commits. */
const journalDelayMs = Number(process.env.CLIENT_FAULTS_JOURNAL_DELAY_MS ?? 10);

describe('warden serve under client-side faults (drop before and after accept, duplicate, half-dead, paused consumer, kill -9), seeded (issue 31)', function () {
  this.timeout(300_000);
  const launched: ChildProcess[] = [];
  let state: string;
  let proxy: WsFaultProxy | HttpFaultProxy | undefined;

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-client-faults-')));
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  for (const transport of ['websocket', 'http'] as const) {
    for (let run = 0; run < runs; run++) {
      const seed = baseSeed + run;
      const journalDelay = run % 2 === 1 && journalDelayMs > 0 ? `${seed}:${journalDelayMs}` : undefined;
      it(`over ${transport === 'http' ? 'Streamable HTTP' : 'a WebSocket'}${journalDelay ? `, journal delayed (WARDEN_FAULT_JOURNAL_DELAY=${journalDelay})` : ''}, seed ${seed}: ${promptsPerRun} keyed prompts, a fault drawn for each; one prompt entry and one end per key, each answer the journal's, every update once and in order per connection (replay: CLIENT_FAULTS_SEED=${seed} CLIENT_FAULTS_RUNS=1)`, async () => {
        const store = join(state, 'journal.sqlite');
        const cwd = join(state, 'project');
        mkdirSync(cwd);
        const port = await freePort();
        const start = () => startServe(state, ['--listen', `127.0.0.1:${port}`, '--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=2'], launched, journalDelay ? { env: { WARDEN_FAULT_JOURNAL_DELAY: journalDelay } } : {});
        let daemon: ServeDaemon = await start();
        const httpUrl = `http://127.0.0.1:${port}/acp`;
        proxy = transport === 'http' ? await startHttpFaultProxy(httpUrl) : await startWsFaultProxy(daemon.url);
        await walkClientFaults({
          seed,
          prompts: promptsPerRun,
          proxy,
          transport,
          world: {
            name: transport,
            cwd,
            token: () => daemon.token,
            async killAndRestart() {
              daemon.process.kill('SIGKILL');
              await daemon.exited;
              daemon = await start();
            },
            journal: async (ids) => sqliteJournal(store, ids),
          },
        });
      });
    }
  }
});
