import { expect } from 'chai';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, type AnyActorRef } from 'xstate';
import { Terminals } from '../../src/acp/terminals.js';
import { createDynamicSupervisor } from '../../src/supervision/index.js';
import { waitUntil } from '../support/processes.js';

describe('terminals', function () {
  this.timeout(20_000);
  let root: string;
  const supervisors: AnyActorRef[] = [];
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'warden-term-')));
    process.env.WARDEN_TERMINAL_TEST_SECRET = 'hunter2';
  });
  afterEach(() => {
    // Here, not at the end of each test: a failed assertion must not leave `sleep 30` running.
    for (const supervisor of supervisors.splice(0)) if (supervisor.getSnapshot().status === 'active') supervisor.stop();
    delete process.env.WARDEN_TERMINAL_TEST_SECRET;
    rmSync(root, { recursive: true, force: true });
  });

  function run(env?: 'isolated' | 'inherit') {
    const supervisor = createActor(createDynamicSupervisor({ name: 'terminals' })).start();
    supervisors.push(supervisor);
    const terminals = new Terminals(supervisor);
    return { supervisor, terminals, create: (script: string) => terminals.create({ sessionId: 's', command: 'sh', args: ['-c', script] }, [root], env) };
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
});
