/**
 * The files `warden acp` creates hold prompts, answers and paths (issue 14): the journal and
 * its -wal/-shm, and the `--log-file`, are 0600; the directories it creates are 0700, under
 * the umask a login shell usually has (022).
 */
import { methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { existsSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killLaunched, launchWarden } from '../support/warden-editor.js';

const modeOf = (path: string) => `0${(statSync(path).mode & 0o777).toString(8)}`;

describe('warden acp: the files it creates are its user\'s only (issue 14)', function () {
  this.timeout(120_000);
  let dir: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-store-files-')));
  });

  afterEach(async () => {
    await killLaunched();
    rmSync(dir, { recursive: true, force: true });
  });

  it('umask 022, the default store under $XDG_STATE_HOME and a --log-file: journal, -wal, -shm and log 0600, the directories it made 0700', async () => {
    const state = join(dir, 'state');
    const journal = join(state, 'acp-warden', 'journal.sqlite');
    const log = join(dir, 'warden.log');
    const warden = await launchWarden(['--agent', 'demo', '--log-file', log, '--env', 'DEMO_WORD_DELAY_MS=0'], { umask: 0o022, env: { XDG_STATE_HOME: state } });
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    await warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    // While warden runs, SQLite keeps its write-ahead log and shared memory next to the file.
    expect(existsSync(`${journal}-wal`) && existsSync(`${journal}-shm`), 'the -wal and -shm files exist while warden runs').to.equal(true);
    expect({
      journal: modeOf(journal),
      wal: modeOf(`${journal}-wal`),
      shm: modeOf(`${journal}-shm`),
      log: modeOf(log),
      state: modeOf(state),
      storeDir: modeOf(join(state, 'acp-warden')),
    }).to.deep.equal({ journal: '0600', wal: '0600', shm: '0600', log: '0600', state: '0700', storeDir: '0700' });
    expect(await warden.close()).to.equal(0);
    expect(modeOf(journal)).to.equal('0600');
    expect(modeOf(log)).to.equal('0600');
    // The directory we were given keeps its own mode.
    expect(modeOf(dir)).to.equal('0700'); // mkdtemp's
  });
});
