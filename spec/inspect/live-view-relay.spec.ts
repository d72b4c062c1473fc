/**
 * `warden inspect` as a process: it prints where its page is, takes the inspection stream of
 * a host sent to it (`createHost({ inspect: 'ws://127.0.0.1:N' })`, what `warden acp
 * --inspect` does) and shows that host's tree, with a kill -9 of its agent as a restart; a
 * port in use is one line naming the fix and status 2; SIGTERM ends it with status 0.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHost, type Host } from '../../src/runtime/host.js';
import type { LiveActorView, LiveViewState } from '../../src/inspect/live-view-model.js';
import { waitUntil } from '../support/processes.js';

const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** `warden inspect ...args` running, with its output so far and its exit. */
function startInspect(...args: string[]): { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [main, 'inspect', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // Resolves once the output is all read too.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Polls the relay's view until `holds` says so, or fails naming `what` and showing the view. */
async function viewUntil(url: string, holds: (view: LiveViewState) => boolean, what: string, timeoutMs = 30_000): Promise<LiveViewState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = (await (await fetch(`${url}state.json`)).json()) as LiveViewState;
    if (holds(view)) return view;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the view: ${JSON.stringify(view).slice(0, 3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function ports(nodes: readonly LiveActorView[]): LiveActorView[] {
  return nodes.flatMap((node) => [...(node.kind === 'port' ? [node] : []), ...ports(node.children)]);
}

describe('warden inspect (the relay)', function () {
  this.timeout(120_000);
  let dir: string;
  let host: Host | undefined;
  let relay: ReturnType<typeof startInspect> | undefined;
  let blocker: Server | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-relay-'));
  });

  afterEach(async () => {
    await host?.stop();
    host = undefined;
    if (relay && relay.child.exitCode === null) {
      relay.child.kill('SIGKILL');
      await relay.exited;
    }
    relay = undefined;
    await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
    blocker = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the tree of a host streamed to it, a kill -9 of its agent as a restart, and ends on SIGTERM', async () => {
    relay = startInspect('--port', '0');
    await waitUntil(() => /live view at http:\/\/127\.0\.0\.1:\d+\//u.test(relay!.stderr()), 'warden inspect to print its address', 60_000);
    const url = /live view at (http:\/\/127\.0\.0\.1:\d+\/)/u.exec(relay.stderr())?.[1] as string;
    const ws = url.replace('http:', 'ws:').replace(/\/$/u, '');
    expect(relay.stderr()).to.contain(`warden acp --agent NAME --inspect ${ws}`);

    host = createHost({ store: ':memory:', inspect: ws, agentOptions: { env: { DEMO_WORD_DELAY_MS: '1' } } });
    const session = await host.newSession({ cwd: dir });
    expect((await session.prompt('hello').result).stopReason).to.equal('end_turn');
    const first = host.processes()[0];
    if (!first) throw new Error('the demo agent has no process');
    let view = await viewUntil(url, (state) => ports(state.sources.flatMap((source) => source.roots)).some((port) => port.pid === first.pid && port.restarts === 0), `the agent process ${first.pid} in the relayed view`);
    expect(view.sources[0]?.label).to.match(/^stream 1 \(from 127\.0\.0\.1:\d+\)$/u);
    expect(view.machines.filter((machine) => machine.chart === 'session').map((machine) => [machine.sessionId, machine.state])).to.deep.equal([[session.sessionId, 'ready']]);
    // The demo agent runs behind the ACP passthrough, a machine too: shown with its chart.
    expect(view.machines.filter((machine) => machine.kind === 'machine' && machine.chart !== 'session').map((machine) => [machine.chart, machine.state])).to.deep.equal([['acpPassthrough', 'ready']]);
    expect(view.charts.acpPassthrough, 'the passthrough chart').to.not.equal(undefined);
    // The agent process and the supervisors on their declared charts.
    expect(view.machines.filter((machine) => machine.kind === 'port').map((machine) => [machine.chart, machine.state])).to.deep.equal([['declared:port', 'running']]);
    expect(view.machines.filter((machine) => machine.kind === 'supervisor' && machine.label === 'agent').map((machine) => [machine.chart, machine.state])).to.deep.equal([['declared:supervisor', 'running']]);

    process.kill(first.pid, 'SIGKILL');
    await waitUntil(() => host!.processes().some((entry) => entry.pid !== first.pid) && session.state() === 'ready', 'the agent process to be restarted', 30_000);
    const second = host.processes()[0] as { pid: number };
    view = await viewUntil(url, (state) =>
      ports(state.sources.flatMap((source) => source.roots)).some((port) => port.pid === second.pid && port.restarts === 1) &&
      state.timeline.some((entry) => entry.kind === 'restart' && entry.text.includes(`pid ${second.pid}`)), `the restart of the agent process as ${second.pid}`);
    expect(view.timeline.some((entry) => entry.kind === 'exit' && entry.text.includes('SIGKILL'))).to.equal(true);

    await host.stop();
    host = undefined;
    relay.child.kill('SIGTERM');
    expect(await relay.exited).to.equal(0);
    expect(relay.stderr()).to.match(/stream 1 \(from 127\.0\.0\.1:\d+\) closed/u);
  });

  it('hands --export to the state chart export, and --help to the command itself', async () => {
    relay = startInspect('--export', 'mermaid', '--machine', 'session');
    expect(await relay.exited).to.equal(0);
    expect(relay.stdout()).to.match(/^stateDiagram-v2\n/u);
    relay = startInspect('--help');
    expect(await relay.exited).to.equal(0);
    expect(relay.stderr()).to.contain('Usage: warden inspect [--port N]');
  });

  it('a port in use: one line naming the fix, status 2', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as { port: number }).port;
    relay = startInspect('--port', String(port));
    expect(await relay.exited).to.equal(2);
    expect(relay.stderr()).to.equal(`warden inspect: port ${port} on 127.0.0.1 is already in use; pick another with --port N (--port 0 takes any free one)\n`);
  });
});
