/**
 * A prompt the host sent its agent while the agent restarts, when the agent then gives up: the
 * host's session machine keeps that prompt (issue 29: the adapter agent no longer does), and
 * answers it with what the agent answers every request it still owed (`session_failed`, naming
 * the agent and its restarts), as before. Real host, fake Claude Code that crashes mid-turn,
 * then crash-loops (a `.fake-crash-loop` file in its working directory, spec/support/fault-signals.mjs).
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHost } from '../../src/runtime/host.js';
import { waitUntil } from '../support/processes.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

type Failure = Error & { readonly data?: { readonly reason?: string; readonly restarts?: number; readonly sessionId?: string } };

describe('prompts of a session whose agent gives up', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-failed-prompts-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('the prompt sent while its CLI restarts fails session_failed as the agent answers what it owed (its name, its restarts), after the crashed one failed agent_crashed', async () => {
    const host = createHost({
      store: ':memory:',
      defaultAgent: 'claude',
      // The first turn's CLI dies after its first line; every restart dies at once (the crash loop).
      agentOptions: { agentCommand: fakeClaude, env: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_CRASH_AFTER: '1' }, onCrash: 'fail' },
      supervision: { intensity: 2, period: 60_000 },
    });
    try {
      const session = await host.newSession({ cwd: dir });
      writeFileSync(join(dir, '.fake-crash-loop'), '');
      // The second waits its turn in the session machine, and starts once the first failed: its CLI is restarting then.
      const first = session.prompt('hello').result.then(() => undefined, (error: Failure) => error);
      const second = session.prompt('hello again').result.then(() => undefined, (error: Failure) => error);
      const crashed = await first;
      expect(crashed?.data?.reason).to.equal('agent_crashed');
      const failed = await second;
      expect(failed?.data?.reason).to.equal('session_failed');
      expect(failed?.message).to.contain('claude kept failing and the session was closed');
      expect(failed?.data).to.deep.include({ sessionId: session.sessionId, restarts: 2 });
      await waitUntil(() => session.state() === 'failed', 'the session to fail');
    } finally {
      await host.stop();
    }
  });
});
