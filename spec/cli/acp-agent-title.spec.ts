/**
 * The `initialize` answer's agentInfo as an editor shows it (issue 15, "Tidy as you go": the
 * title read "Claude Code (via acp-warden) (acp-warden)", the suffix doubled). warden is
 * launched as an editor launches it (the bare `warden` through PATH), with the bare `claude`
 * and `codex` on the PATH being the fakes that replay recorded transcripts.
 */
import { expect } from 'chai';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binDirectory, initializedEditor, stopAll } from '../support/path-editor.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const fakeCodex = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));

describe('warden acp: the agent title the editor shows', function () {
  this.timeout(120_000);
  let dir: string;
  let bin: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-title-')));
    bin = binDirectory(dir, { claude: fakeClaude, codex: fakeCodex });
  });

  afterEach(async () => {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [agent, name, title] of [
    ['claude', 'claude-code', 'Claude Code (acp-warden)'],
    ['codex', 'codex', 'Codex (acp-warden)'],
  ] as const) {
    it(`--agent ${agent}: agentInfo names the agent once and says acp-warden once (${title})`, async () => {
      const editor = await initializedEditor(bin, ['--agent', agent, '--store', join(dir, 'journal.sqlite')], dir);
      const info = (editor.initialized as { agentInfo?: { name: string; title?: string } } | undefined)?.agentInfo;
      expect(info?.name).to.equal(name);
      expect(info?.title).to.equal(title);
      expect(await editor.close()).to.equal(0);
    });
  }
});
