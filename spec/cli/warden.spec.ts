import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

function warden(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', main, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('warden command', function () {
  this.timeout(60_000);

  it('demo: a crash, a restart, an escalation, then an ACP conversation with a cancel', async () => {
    // The escalation comes about 1.5 s in; the default 4 s leaves a wide margin on a slow machine.
    const { code, stdout } = await warden('demo');
    expect(code).to.equal(0);
    expect(stdout).to.match(/host\/agent: process exited: error: .* -> restart_delayed/u);
    expect(stdout).to.contain('host/agent: more than 2 restarts in 2000 ms: giving up');
    expect(stdout).to.contain('host: agent exited: shutdown (reached_max_restart_intensity) -> restart');
    expect(stdout).to.contain('host exited: shutdown');
    expect(stdout).to.contain('[tool completed]');
    expect(stdout).to.contain('(stop reason: cancelled)');
  });

  it('names a command that is not built yet, and an unknown one, on stderr with status 2', async () => {
    const inspect = await warden('inspect');
    expect(inspect.code).to.equal(2);
    expect(inspect.stdout).to.equal('');
    expect(inspect.stderr).to.contain('warden inspect: not available in this version yet');
    const unknown = await warden('frobnicate');
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain('unknown command "frobnicate"');
    const badFlag = await warden('demo', '--duration', 'soon');
    expect(badFlag.code).to.equal(2);
    expect(badFlag.stderr).to.contain('expected --duration to be a positive number of milliseconds');
  });
});
