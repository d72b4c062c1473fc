/**
 * Relay benchmark: what one ACP `session/update` costs on its way agent -> warden -> editor,
 * against `JSON.parse` + `JSON.stringify` of the same line (what any relay must at least do),
 * measured in the same process, cases interleaved round by round. Prints figures; asserts
 * nothing about speed (it checks that every update arrived, the last one last, and that every
 * agent process it started is gone at the end).
 *
 * The agent is a real process (bench/support/flood-agent.mjs), because that is what warden
 * relays for an ACP agent: a port under a supervisor. On each `session/prompt` it writes N
 * prebuilt updates to its stdout at once. The editor is this process, on the other side of
 * `stdioTransport` (what `warden acp` speaks) over in-process streams: it writes requests into
 * a `PassThrough` and counts the lines warden writes to a `Writable`. Cases:
 *
 * - warden, passthrough: the agent server serving `createAcpPassthrough` directly (port ->
 *   port transport -> agent client -> passthrough -> agent server -> stdio transport);
 * - warden acp: the same under `createHost(...).serve(...)`, the host agent journaling every
 *   update before the editor hears it (SQLite file in WAL mode, the default), and with a
 *   `:memory:` journal to tell the host from the disk;
 * - warden acp as an editor launches it: the built CLI in a process of its own, its stdout a
 *   pipe to this process (what the in-process cases do not pay: a system call per write);
 * - the official SDK (`@agentclientprotocol/sdk`) as a relay: a client app on `ndJsonStream`
 *   over the agent's stdio whose `session/update` handler calls `notify` on an agent-side
 *   connection towards the editor (`ndJsonStream` over web streams);
 * - a bare relay: `spawn` of the same agent, its stdout split into lines, each parsed and
 *   stringified and handed to the editor (the pipe and the JSON, nothing else).
 *
 * Each is timed from the first update the editor sees to the N-th; per update = that / (N - 1).
 * Beside it, the CPU time per update, request to answer: this process's (every thread), or the
 * warden process's from /proc; and the main thread's alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { agent as sdkAgent, client as sdkClient, ndJsonStream, type AgentConnection, type ClientConnection } from '@agentclientprotocol/sdk';
import { buildEnvironment } from '../src/port/index.js';
import { check, collectGarbage, formatNs, formatRatio, formatStats, measureInterleaved, now, since, table, withDeadline, type Plan } from './support/measure.js';
import { cpuRecorder } from './support/own-cpu.js';
import { exists } from './support/process-exists.js';
import { buildWarden } from './support/build-warden.js';
import { baseline, Editor, floodAgent, lines, promptParams, sessionId, updates, wardenHost, wardenPassthrough, wardenSession, type Relay } from './support/relay-cases.js';

/** The cases, in the order they run each round. */
type Case = 'baseline' | 'bare' | 'passthrough' | 'hostMemory' | 'hostFile' | 'process' | 'sdk';

// ---------------------------------------------------------------------------------------
// Warden as a process

/**
 * `warden acp` as an editor launches it: the built CLI (tsc, as the package's bin), a process of
 * its own with its file journal, its stdout a pipe to this process. Its CPU is read from /proc.
 */
async function wardenProcess(dir: string): Promise<Relay & { readonly pid: number }> {
  const main = buildWarden(join(dir, 'build'));
  const editor = new Editor();
  const agent = `acp:"${process.execPath}" "${floodAgent}" ${updates}`;
  const child = spawn(process.execPath, [main, 'acp', '--agent', agent, '--store', join(dir, 'process.sqlite')], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...buildEnvironment(), XDG_STATE_HOME: dir, HOME: dir },
  });
  check(child.pid !== undefined, 'warden acp was spawned');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdout?.on('data', (chunk: Buffer) => editor.push(chunk));
  const input = child.stdin as Writable;
  const stop = async () => {
    input.end(); // EOF: warden answers what is left, stops its agent and exits
    await withDeadline(exited, 'warden acp (process): exit');
  };
  try {
    return { ...(await wardenSession(editor, input, stop, 'warden acp (process)')), pid: child.pid as number };
  } catch (error) {
    child.kill('SIGKILL'); // its agent ends with its stdin
    throw error;
  }
}


// ---------------------------------------------------------------------------------------
// The official SDK as a relay

async function sdkRelay(): Promise<Relay> {
  const editor = new Editor();
  const child = track(spawn(process.execPath, [floodAgent, String(updates)], { env: buildEnvironment(), stdio: ['pipe', 'pipe', 'inherit'] }));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let closeEditorInput: () => void = () => {};
  const editorInput = new ReadableStream<Uint8Array>({
    start: (controller) => {
      closeEditorInput = () => {
        // The connection's close may have closed it already.
        try {
          controller.close();
        } catch {
          // closed
        }
      };
    },
  });
  const editorOutput = new WritableStream<Uint8Array>({ write: (chunk) => editor.push(chunk) });
  const towardsEditor: AgentConnection = sdkAgent({ name: 'sdk-relay' }).connect(ndJsonStream(editorOutput, editorInput));
  const app = sdkClient({ name: 'sdk-relay' }).onNotification('session/update', ({ params }) => {
    void towardsEditor.client.notify('session/update', params);
  });
  const towardsAgent: ClientConnection = app.connect(ndJsonStream(Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>));
  await withDeadline(towardsAgent.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} }), 'SDK: initialize');
  const opened = await withDeadline(towardsAgent.agent.request('session/new', { cwd: tmpdir(), mcpServers: [] }), 'SDK: session/new');
  check(opened.sessionId === sessionId, 'SDK: session opened');
  return {
    async prompt() {
      editor.reset();
      const result = await withDeadline(towardsAgent.agent.request('session/prompt', promptParams as never), 'SDK: prompt');
      check(result.stopReason === 'end_turn', 'SDK: the prompt ended');
      // The last notify may still be in the editor stream when the answer arrives.
      await withDeadline((async () => {
        while (editor.count < updates) await new Promise((resolve) => setImmediate(resolve));
      })(), 'SDK: last update');
      return editor.perUpdate('SDK');
    },
    async close() {
      towardsAgent.close();
      towardsEditor.close();
      closeEditorInput();
      child.stdin?.end();
      await withDeadline(exited, 'SDK: agent exit');
    },
  };
}

// ---------------------------------------------------------------------------------------
// A bare relay: the pipe and the JSON

async function bareRelay(): Promise<Relay> {
  const editor = new Editor();
  const child = track(spawn(process.execPath, [floodAgent, String(updates)], { env: buildEnvironment(), stdio: ['pipe', 'pipe', 'inherit'] }));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let pending = '';
  let answered: (() => void) | undefined;
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const message = JSON.parse(pending.slice(0, newline)) as { id?: unknown };
      pending = pending.slice(newline + 1);
      if (message.id !== undefined) answered?.();
      else editor.push(`${JSON.stringify(message)}\n`);
    }
  });
  let nextId = 1;
  return {
    async prompt() {
      editor.reset();
      const done = new Promise<void>((resolve) => (answered = resolve));
      child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'session/prompt', params: promptParams })}\n`);
      await withDeadline(done, 'bare: prompt');
      return editor.perUpdate('bare relay');
    },
    async close() {
      child.stdin?.end();
      await withDeadline(exited, 'bare: agent exit');
    },
  };
}

// ---------------------------------------------------------------------------------------
// Processes

/** Every agent process this file started (the SDK and bare cases'; warden's are found in /proc). */
const started: number[] = [];

function track(child: ChildProcess): ChildProcess {
  check(child.pid !== undefined, 'the agent was spawned');
  started.push(child.pid as number);
  return child;
}

/** Children of `parent` (this process by default) running the flood agent, from /proc. */
function floodChildren(parent = process.pid): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      // The script is the first argument (a warden process names it too, in its --agent).
      if (ppid === parent && readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[1]?.endsWith('flood-agent.mjs')) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}


// ---------------------------------------------------------------------------------------

/** Runs the relay benchmark and prints its table. */
export async function relay(): Promise<void> {
  const begun = now();
  console.log('\n## Relay');
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-relay-'));
  const relays: Partial<Record<Case, Relay>> = {};
  try {
    relays.passthrough = await wardenPassthrough();
    relays.hostFile = await wardenHost(join(dir, 'journal.sqlite'));
    relays.hostMemory = await wardenHost(':memory:');
    const warden = await wardenProcess(dir);
    relays.process = warden;
    relays.sdk = await sdkRelay();
    relays.bare = await bareRelay();
    for (const pid of [...floodChildren(), ...floodChildren(warden.pid)]) if (!started.includes(pid)) started.push(pid);
    check(started.length === 6, `six agent processes running (${started.length})`);
    // No collection before each repetition: a forced full collection makes V8 drop the
    // optimized code of the path just run, and each case then paid its recompilation (5-7
    // TurboFan jobs a repetition on V8's threads, counted in the process's CPU), which a
    // relay streaming on does not. One collection before the rounds; then as a stream would.
    const plan: Plan = { warmup: 3, repetitions: 21 };
    const cpu = cpuRecorder<Case>(updates);
    collectGarbage();
    const prompt = (name: Case) => () => (relays[name] as Relay).prompt();
    const r = await measureInterleaved(plan, {
      baseline: cpu.around('baseline', () => baseline()),
      bare: cpu.around('bare', prompt('bare')),
      passthrough: cpu.around('passthrough', prompt('passthrough')),
      hostMemory: cpu.around('hostMemory', prompt('hostMemory')),
      hostFile: cpu.around('hostFile', prompt('hostFile')),
      process: cpu.around('process', prompt('process'), () => warden.pid),
      sdk: cpu.around('sdk', prompt('sdk')),
    });
    const used = (name: Case) => cpu.median(name, plan.warmup);
    const base = used('baseline');
    const bytes = (lines[updates - 1] as string).length + 1;
    const cpuOf = (ns: number | undefined, baseNs: number | undefined): [string, string] => (ns === undefined ? ['-', '-'] : [formatNs(ns), baseNs === undefined ? '-' : formatRatio(ns / baseNs)]);
    const row = (label: string, name: Case): string[] => {
      const { process: all, main } = used(name);
      return [label, formatStats(r[name]), formatRatio(r[name].median / r.baseline.median), ...cpuOf(all, base.process), ...cpuOf(main, base.main)];
    };
    console.log(`\n(${updates.toLocaleString('en-US')} updates of ${bytes} bytes a line per prompt; per update, medians; wall: in the editor, from the first update to the last; CPU: request to answer)\n`);
    console.log(table(['case', 'wall (min–max)', 'wall / baseline', 'CPU', 'CPU / baseline', 'main thread CPU', 'main / baseline'], [
      row('baseline: JSON.parse + JSON.stringify of the line', 'baseline'),
      row('bare relay: spawn, split, parse, stringify', 'bare'),
      row('warden: agent server + ACP passthrough (no host)', 'passthrough'),
      row('warden acp: host, :memory: journal', 'hostMemory'),
      row('warden acp: host, file journal (WAL; the default)', 'hostFile'),
      row('warden acp as a process (built CLI, stdout a pipe)', 'process'),
      row('SDK 2.4.0: client app -> notify on agent connection', 'sdk'),
    ]));
    const over = (name: Case) => `${formatNs(r[name].median - r.passthrough.median)} wall, ${formatNs((used(name).process ?? 0) - (used('passthrough').process ?? 0))} CPU`;
    console.log(`\nHost over passthrough (medians, per update): ${over('hostMemory')} with a :memory: journal; ${over('hostFile')} with the file journal.`);
    console.log('CPU: this process\'s (process.cpuUsage(): every thread, V8\'s compiler and collector too; the editor\'s');
    console.log('counting of lines is in it), or for warden acp as a process that process\'s (/proc/PID/task/*/schedstat);');
    console.log('main thread: /proc/PID/task/PID/schedstat. The agents (separate processes) are not counted; each writes');
    console.log('its updates all at once. In-process, warden\'s editor side is stdioTransport over a PassThrough and a');
    console.log('Writable; the SDK\'s is ndJsonStream over web streams, reading the agent through Readable.toWeb / Writable.toWeb.');
    console.log(`${plan.repetitions} repetitions each after ${plan.warmup} warm-up rounds, interleaved; one collection before the rounds.`);
  } finally {
    try {
      for (const relayed of Object.values(relays)) await relayed.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // The ports' process groups are signalled after stdin EOF: give them a moment to be reaped.
  await withDeadline((async () => {
    while (started.some(exists) || floodChildren().length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  })(), 'every agent process gone');
  console.log(`\nAgent processes started: ${started.length}; left alive: 0 (process.kill(pid, 0) and /proc).`);
  console.log(`(relay benchmark: ${formatNs(since(begun))})`);
}

