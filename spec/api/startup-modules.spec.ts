/**
 * `warden acp` loads only what it uses (issue 15, "Startup"): launched as an editor launches
 * it (the bare command `warden` through PATH, `claude` found through PATH), every ES module
 * it loads is logged by a module hook (spec/support/module-log.mjs), and the log is read
 * after it answered `initialize` and `session/new` and exited. The inspector's WebSocket
 * code loads only with `--inspect`; the demo agent, the other commands (demo, chaos, the
 * inspect viewer) and the state-chart catalog never load for `--agent claude`. execa, zod
 * and the SDK's schemas have not loaded when `initialize` is answered (the log is read then,
 * and also sees `require()`: spec/support/require-log.cjs); `session/new` loads them.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exitCodeOf, killGroups, stderrOf, wardenSource as wardenMain, writeShim } from '../support/warden-process.js';

const tsx = import.meta.resolve('tsx');
const moduleLog = fileURLToPath(new URL('../support/module-log.mjs', import.meta.url));
const requireLog = fileURLToPath(new URL('../support/require-log.cjs', import.meta.url));
const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const src = fileURLToPath(new URL('../../src/', import.meta.url));

const launched: ChildProcess[] = [];

/** What one run loaded: by the time `initialize` was answered, and in all (after `session/new`). */
interface Loaded {
  readonly atInitialize: string[];
  readonly all: string[];
}

/**
 * Runs `warden acp ARGS` through PATH, asks `initialize`, reads the module log as soon as it is
 * answered (nothing else is asked meanwhile), then asks `session/new`, closes stdin; resolves
 * with the modules it loaded (through `import` and through `require()`).
 */
async function modulesLoadedBy(dir: string, args: readonly string[]): Promise<Loaded> {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const log = join(dir, `modules-${launched.length}.log`);
  writeShim(join(bin, 'warden'), `'${process.execPath}' --import '${tsx}' --import '${moduleLog}' --require '${requireLog}' '${wardenMain}'`);
  writeShim(join(bin, 'claude'), `'${process.execPath}' '${fakeClaude}'`);
  const child = spawn('warden', ['acp', ...args], {
    cwd: dir,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir, XDG_STATE_HOME: join(dir, 'state'), MODULE_LOG: log },
  });
  launched.push(child);
  const stderr = stderrOf(child);
  const exited = exitCodeOf(child);
  const answers = new Map<number, Record<string, unknown>>();
  let buffered = '';
  const answered = (id: number) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const answer = answers.get(id);
        if (answer) resolve(answer);
      };
      child.stdout?.on('data', check);
      void exited.then((code) => reject(new Error(`warden exited (${code}) before answering request ${id}: ${stderr()}`)));
      check();
    });
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const message = JSON.parse(buffered.slice(0, newline)) as { id?: number };
      if (typeof message.id === 'number') answers.set(message.id, message as Record<string, unknown>);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  });
  const send = (message: unknown) => child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', ...(message as object) })}\n`);
  send({ id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } } });
  expect(await answered(1)).to.have.property('result');
  const atInitialize = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  send({ id: 2, method: 'session/new', params: { cwd: dir, mcpServers: [] } });
  expect(await answered(2), stderr()).to.have.property('result');
  child.stdin?.end();
  expect(await exited, stderr()).to.equal(0);
  return { atInitialize, all: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

/** The project's own modules among `urls`, as paths under src/ (`inspect/inspector.ts`). */
const ownModules = (urls: readonly string[]) => urls.filter((url) => url.startsWith('file://')).map((url) => fileURLToPath(url)).filter((path) => path.startsWith(src)).map((path) => path.slice(src.length));
/** The packages among `urls` (`ws`, `@statelyai/inspect`). */
const packages = (urls: readonly string[]) => [...new Set(urls.map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//u.exec(url)?.[1]).filter((name): name is string => name !== undefined))];

describe('warden acp startup: what it loads', function () {
  this.timeout(120_000);
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-startup-'));
  });
  afterEach(async () => {
    await killGroups(launched, { descendants: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('--agent claude serves a session without loading the inspector, the WebSocket code, the demo agent or the other commands', async () => {
    const urls = (await modulesLoadedBy(dir, ['--agent', 'claude'])).all;
    const own = ownModules(urls);
    // What it does use (so the log is the real one).
    expect(own).to.include.members(['cli/main.ts', 'cli/acp.ts', 'runtime/host.ts', 'adapters/claude/adapter.ts', 'port/port.ts']);
    expect(packages(urls)).to.include.members(['xstate', '@agentclientprotocol/sdk', 'better-sqlite3']);
    expect(packages(urls)).not.to.include.members(['ws']);
    expect(packages(urls), 'packages loaded').to.not.include('@statelyai/inspect');
    for (const unused of ['inspect/inspector-socket.ts', 'inspect/live-view-server.ts', 'inspect/live-view-page.ts', 'inspect/live-view-model.ts', 'inspect/chart-catalog.ts', 'acp/demo-agent.ts', 'acp/demo-turn.ts', 'cli/demo.ts', 'cli/chaos.ts', 'cli/inspect.ts', 'cli/agents.ts']) {
      expect(own, `modules loaded by warden acp --agent claude`).not.to.include(unused);
    }
  });

  it('--agent claude answers initialize before execa, zod and the SDK\'s schemas load; the first spawn and the first check that needs them load them', async () => {
    const { atInitialize, all } = await modulesLoadedBy(dir, ['--agent', 'claude']);
    const heavy = (urls: readonly string[]) => urls.filter((url) => /\/node_modules\/(?:execa|zod)\//u.test(url) || url.endsWith('/zod.gen.js') || url.endsWith('/@agentclientprotocol/sdk/dist/v1/stable/acp.js'));
    expect(ownModules(atInitialize), 'the log was read after warden had started').to.include.members(['cli/acp.ts', 'acp/agent-server.ts', 'acp/schemas.ts', 'port/port.ts']);
    expect(heavy(atInitialize), 'loaded before initialize was answered').to.deep.equal([]);
    // session/new spawns claude and has its params checked by the SDK's schema: the log sees both load.
    expect(all.filter((url) => url.endsWith('/node_modules/execa/index.js')), 'execa, loaded for the first spawn').to.have.lengthOf(1);
    expect(all.filter((url) => url.endsWith('/dist/v1/schema/zod.gen.js')), 'the SDK schemas, loaded for session/new').to.have.lengthOf(1);
  });

  it('--inspect loads the inspector and its WebSocket client', async () => {
    // An inspector address that accepts and hangs up: warden connects (and reconnects) to it.
    const server: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const urls = (await modulesLoadedBy(dir, ['--agent', 'claude', '--inspect', `ws://127.0.0.1:${port}`])).all;
      expect(ownModules(urls)).to.include('inspect/inspector-socket.ts');
      expect(packages(urls)).to.include('ws');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
