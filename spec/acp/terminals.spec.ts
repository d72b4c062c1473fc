import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import { OutputTail } from '../../src/acp/output-tail.js';
import { Terminals, type TerminalLimits } from '../../src/acp/terminals.js';
import { createHost, type Host } from '../../src/runtime/host.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { createDynamicSupervisor } from '../../src/supervision/index.js';
import { isAlive, waitUntil } from '../support/processes.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

describe('terminals', function () {
  this.timeout(60_000);
  let root: string;
  const supervisors: AnyActorRef[] = [];
  /** Pids the tests' commands wrote down (daemons among them): killed if a test left any. */
  const pidFiles: string[] = [];
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'warden-term-')));
    process.env.WARDEN_TERMINAL_TEST_SECRET = 'hunter2';
  });
  afterEach(() => {
    // Here, not at the end of each test: a failed assertion must not leave `sleep 30` running.
    for (const supervisor of supervisors.splice(0)) if (supervisor.getSnapshot().status === 'active') supervisor.stop();
    for (const file of pidFiles.splice(0)) {
      const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : 0;
      if (pid > 1 && isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
    delete process.env.WARDEN_TERMINAL_TEST_SECRET;
    rmSync(root, { recursive: true, force: true });
  });

  function run(env?: 'isolated' | 'inherit', limits?: TerminalLimits) {
    const supervisor = createActor(createDynamicSupervisor({ name: 'terminals', intensity: 1000, period: 1000 })).start();
    supervisors.push(supervisor);
    const terminals = new Terminals(supervisor, limits);
    return {
      supervisor,
      terminals,
      create: (script: string, extra: { sessionId?: string; outputByteLimit?: unknown } = {}) =>
        terminals.create({ sessionId: 's', command: 'sh', args: ['-c', script], ...extra } as Parameters<Terminals['create']>[0], [root], env),
    };
  }

  async function refusal(promise: Promise<unknown>): Promise<RpcError> {
    const error = await promise.then(() => undefined, (caught: unknown) => caught);
    expect(error).to.be.instanceOf(RpcError);
    return error as RpcError;
  }

  /**
   * Shell that waits until the daemon wrote its pid: a command that ends at once would have its
   * group killed while `setsid -f`'s child may not have left it yet (under load it had not: the
   * daemon died before writing, seen on Node 22 in CI).
   */
  const untilWritten = (name: string) => `n=0; while ! grep -qx '[0-9][0-9]*' ${name} 2>/dev/null && [ $n -lt 400 ]; do sleep 0.05; n=$((n+1)); done`;

  /** A pid a command wrote to `name` in the workspace, once it is there. */
  async function pidIn(name: string): Promise<number> {
    const file = join(root, name);
    pidFiles.push(file);
    await waitUntil(() => existsSync(file) && /^\d+\n$/u.test(readFileSync(file, 'utf8')), `${name} to be written`, 20_000);
    return Number(readFileSync(file, 'utf8'));
  }

  it('run in an isolated environment by default: host secrets are not visible', async () => {
    const { terminals, create } = run();
    const { terminalId } = await create('echo "secret=[$WARDEN_TERMINAL_TEST_SECRET] path=[${PATH:+set}]"');
    expect(await terminals.waitForExit({ sessionId: 's', terminalId })).to.deep.equal({ exitCode: 0, signal: null });
    expect(terminals.output({ sessionId: 's', terminalId }).output).to.equal('secret=[] path=[set]\n');
  });

  it('inherit the host environment when asked', async () => {
    const { terminals, create } = run('inherit');
    const { terminalId } = await create('echo "secret=[$WARDEN_TERMINAL_TEST_SECRET]"');
    await terminals.waitForExit({ sessionId: 's', terminalId });
    expect(terminals.output({ sessionId: 's', terminalId }).output).to.equal('secret=[hunter2]\n');
  });

  it('kill ends a running command and keeps its id; release forgets it; other sessions cannot see it', async () => {
    const { terminals, create } = run();
    const { terminalId } = await create('echo started; sleep 30');
    await waitUntil(() => terminals.output({ sessionId: 's', terminalId }).output.includes('started'), 'the command to print');
    await terminals.kill({ sessionId: 's', terminalId });
    expect(terminals.output({ sessionId: 's', terminalId })).to.deep.include({ output: 'started\n', exitStatus: { exitCode: null, signal: 'SIGKILL' } });
    expect(() => terminals.output({ sessionId: 'other', terminalId })).to.throw(/Resource not found/);
    await terminals.release({ sessionId: 's', terminalId });
    expect(terminals.size).to.equal(0);
    expect(() => terminals.output({ sessionId: 's', terminalId })).to.throw(/Resource not found/);
  });

  it('an outputByteLimit past the host\'s cap is lowered to it: the last bytes are kept, cut at a character boundary', async () => {
    const { terminals, create } = run('isolated', { maxOutputByteLimit: 4096 });
    // 20,000 lines "é <n>": about 170 kB, with two-byte characters to cut through.
    const { terminalId } = await create('i=1; while [ $i -le 20000 ]; do echo "é $i"; i=$((i+1)); done', { outputByteLimit: 1_000_000_000 });
    await terminals.waitForExit({ sessionId: 's', terminalId });
    const { output, truncated } = terminals.output({ sessionId: 's', terminalId });
    expect(truncated).to.equal(true);
    expect(Buffer.byteLength(output)).to.be.at.most(4096).and.at.least(4093);
    expect(output.endsWith('é 19999\né 20000\n')).to.equal(true);
    expect(output).not.to.contain('\uFFFD');
  });

  it('refuses an outputByteLimit that is not a non-negative integer with -32602, running nothing', async () => {
    const { terminals, create } = run();
    for (const limit of [-1, 1.5, '100']) {
      const error = await refusal(create('echo ran >> ran.txt', { outputByteLimit: limit }));
      expect(error.code).to.equal(-32602);
      expect(error.message).to.contain('outputByteLimit');
    }
    expect(terminals.size).to.equal(0);
    expect(existsSync(join(root, 'ran.txt'))).to.equal(false);
  });

  it('a session holds at most maxPerSession terminals: past it -32600 naming the cap; a release makes room; other sessions are not counted', async () => {
    const { terminals, create } = run('isolated', { maxPerSession: 2 });
    const first = await create('sleep 30');
    await create('sleep 30');
    const error = await refusal(create('echo third >> third.txt'));
    expect(error.code).to.equal(-32600);
    expect(error.message).to.contain('2 terminals').and.to.contain('terminal/release');
    expect(existsSync(join(root, 'third.txt'))).to.equal(false);
    // Concurrent creates count while they start: never more than the cap.
    const other = await Promise.allSettled([1, 2, 3].map(() => create('sleep 30', { sessionId: 'other' })));
    expect(other.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected']);
    await terminals.release({ sessionId: 's', terminalId: first.terminalId });
    await create('true');
    await terminals.releaseAll();
    expect(terminals.size).to.equal(0);
  });

  it('release kills the command\'s background jobs and a setsid daemon it started, even after the command ended', async () => {
    const { terminals, create } = run();
    const { terminalId } = await create(`sleep 300 & echo $! > job.pid; setsid -f sh -c 'echo $$ > daemon.pid; exec sleep 300' < /dev/null > /dev/null 2>&1; ${untilWritten('daemon.pid')}; echo started`);
    const job = await pidIn('job.pid');
    const daemon = await pidIn('daemon.pid');
    await terminals.waitForExit({ sessionId: 's', terminalId });
    // The command has ended; its daemon has left the group and lives on.
    expect(isAlive(daemon)).to.equal(true);
    await terminals.release({ sessionId: 's', terminalId });
    await waitUntil(() => !isAlive(job) && !isAlive(daemon), 'the background job and the daemon to be gone', 20_000);
  });

  it('kill ends a running command\'s background job and a daemon it started, and keeps the id valid', async () => {
    const { terminals, create } = run();
    const { terminalId } = await create('sleep 300 & echo $! > job.pid; setsid -f sh -c \'echo $$ > daemon.pid; exec sleep 300\' < /dev/null > /dev/null 2>&1; sleep 300');
    const job = await pidIn('job.pid');
    const daemon = await pidIn('daemon.pid');
    await terminals.kill({ sessionId: 's', terminalId });
    await waitUntil(() => !isAlive(job) && !isAlive(daemon), 'the job and the daemon to be gone', 20_000);
    expect(terminals.output({ sessionId: 's', terminalId }).exitStatus).to.deep.equal({ exitCode: null, signal: 'SIGKILL' });
  });

  it('a client that ends (its terminal supervisor stopped) leaves no daemon of any terminal it held', async () => {
    const { supervisor, terminals, create } = run();
    await create('setsid -f sh -c \'echo $$ > one.pid; exec sleep 300\' < /dev/null > /dev/null 2>&1; sleep 300');
    await create(`setsid -f sh -c 'echo $$ > two.pid; exec sleep 300' < /dev/null > /dev/null 2>&1; ${untilWritten('two.pid')}`);
    const daemons = [await pidIn('one.pid'), await pidIn('two.pid')];
    // What the agent client does as it closes: the groups die with the supervisor, the rest by marker.
    supervisor.stop();
    terminals.killStragglers();
    await waitUntil(() => daemons.every((pid) => !isAlive(pid)), 'both daemons to be gone', 20_000);
  });

  it('createHost({ terminals }) with a bad bound throws a TypeError naming the option from createHost itself, as files does (not later, inside an actor)', async () => {
    const bad: Array<[TerminalLimits, string]> = [[{ maxPerSession: 0 }, 'maxPerSession'], [{ maxOutputByteLimit: -1 }, 'maxOutputByteLimit'], [{ maxOutputByteLimit: 1.5 }, 'maxOutputByteLimit']];
    for (const [terminals, option] of bad) {
      let host: Host | undefined;
      let thrown: unknown;
      try {
        host = createHost({ store: ':memory:', terminals });
      } catch (error) {
        thrown = error;
      }
      await host?.stop();
      expect(thrown, JSON.stringify(terminals)).to.be.instanceOf(TypeError);
      expect((thrown as TypeError).message).to.contain(`\`${option}\``);
    }
  });

  it('createHost({ terminals }) caps what a native agent asks for (an SDK-built agent run as acp:node)', async function () {
    this.timeout(60_000);
    const hosts: Host[] = [];
    try {
      // The agent asks for 4,096 bytes of "echo hi": the host keeps 2.
      const host = createHost({ store: ':memory:', terminals: { maxOutputByteLimit: 2 } });
      hosts.push(host);
      const session = await host.newSession({ cwd: root, agent: `acp:node ${sdkAgent}` });
      const run = session.prompt('terminal');
      let said = '';
      for await (const update of run) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') said += update.content.text;
      await run.result;
      expect(said).to.contain('terminal output: "i\\n" exit 0');
    } finally {
      for (const host of hosts) await host.stop();
    }
  });
});

describe('terminal output tail', () => {
  it('keeps exactly what keeping the whole output and cutting it would, chunk by chunk', () => {
    // A fixed pseudo-random sequence of chunks of ASCII, two-, three- and four-byte characters,
    // from single characters (a command writing a byte at a time) to several times the limit.
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % Math.max(1, n));
    const alphabet = ['a', 'é', '€', '😀', '\n'];
    for (const limit of [0, 1, 2, 3, 5, 64, 1000, 40_000]) {
      const tail = new OutputTail(limit);
      let recent = ''; // the last characters of the whole output, enough to cut `limit` bytes from
      let total = 0;
      for (let i = 0; i < 400; i++) {
        let chunk = '';
        const big = next(10) === 0;
        for (let segments = next(4) + 1; segments > 0; segments--) chunk += (alphabet[next(alphabet.length)] as string).repeat(next(big ? limit * 3 + 3 : 4) + 1);
        tail.append(chunk);
        total += Buffer.byteLength(chunk);
        recent = (recent + chunk).slice(-(limit + 4));
        const bytes = Buffer.from(recent);
        let start = Math.max(0, bytes.length - limit);
        while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
        expect(tail.text, `limit ${limit}, chunk ${i}`).to.equal(bytes.subarray(start).toString());
        expect(tail.truncated).to.equal(total > limit);
        expect(tail.bytes).to.be.at.most(limit);
      }
    }
  });
});
