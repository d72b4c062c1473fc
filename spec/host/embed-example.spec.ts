import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const example = fileURLToPath(new URL('../../examples/embed-host.ts', import.meta.url));

describe('examples/embed-host.ts', function () {
  this.timeout(60_000);

  it('runs: a streamed prompt, its stop reason, a journal, the tree, and the session states on stderr', async () => {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', example], { timeout: 50_000 }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve({ stdout: out, stderr: err })));
    });
    expect(stdout).to.contain('You said: please run the tool.');
    expect(stdout).to.contain('stop reason: end_turn');
    expect(Number(/journal entries: (\d+)/.exec(stdout)?.[1])).to.be.greaterThan(3);
    expect(stderr).to.match(/: prompting\]/);
    expect(stderr).to.match(/: awaitingPermission\]/);
  });
});
