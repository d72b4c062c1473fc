/**
 * `warden acp --agent demo --daemon` launched as an editor launches it (issue 16; docs/serve.md,
 * "`warden acp --connect URL` and `--daemon`"): the bare `warden` found on the PATH the editor
 * gives it (a temp bin directory with a `warden` shim, spec/support/launch-harness.ts), the
 * ACP SDK's client on its stdio (spec/support/editor.ts). The first launch finds no daemon and
 * starts one in the background (detached, outliving its bridge); the second reuses it, and `warden sessions`
 * lists both editors' sessions; stopping the daemon (SIGTERM to the pid its serve.log names) leaves
 * nothing: no daemon, no agent, no bridge, no socket file.
 *
 * The daemon listens on a Unix socket of the test's own (`--listen unix:…`) instead of the
 * user's 127.0.0.1:8767, so that a daemon a person runs on this machine is never reached.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, type EditorSession } from '../support/editor.js';
import { pathDirectory } from '../support/launch-harness.js';
import { expectGroupGone, isAlive, processesWhere, waitUntil } from '../support/processes.js';
import { leftovers } from '../support/real-agents-harness.js';
import { demoAgentsOf } from '../support/serve-daemon.js';

describe('warden acp --agent demo --daemon, launched as an editor does: bare warden on the PATH, the SDK client on stdio (issue 16)', function () {
  this.timeout(180_000);
  let state: string;
  const editors: EditorSession[] = [];

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-daemon-launch-')));
  });

  afterEach(async () => {
    for (const editor of editors.splice(0)) await editor.close();
    // The daemon is nobody's child here: found by its command line, which names this test's socket.
    for (const pid of processesWhere((cmdline) => cmdline.includes(state) && cmdline.includes(' serve '))) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
      await expectGroupGone(pid, 20_000);
    }
    await waitUntil(() => leftovers(state).length === 0, 'every process of the test to be gone', 20_000);
    rmSync(state, { recursive: true, force: true });
  });

  it('the first launch starts the daemon in the background, the second reuses it (warden sessions lists both sessions); SIGTERM to the daemon leaves nothing', async () => {
    const bin = pathDirectory(join(state, 'bin'));
    const project = join(state, 'project');
    mkdirSync(project);
    const socket = join(state, 'warden.sock');
    // What an editor gives its agent: a PATH, a HOME; the user's state directory (token file, journal, serve.log) under the test's.
    const env = { PATH: [bin, '/usr/local/bin', '/usr/bin', '/bin'].join(':'), HOME: state, TMPDIR: state, XDG_STATE_HOME: state };
    const daemons = () => processesWhere((cmdline) => cmdline.includes(socket) && cmdline.includes(' serve '));
    const open = () => {
      const editor = launch('warden', ['acp', '--agent', 'demo', '--daemon', '--listen', `unix:${socket}`], { env, cwd: project, requestTimeoutMs: 90_000 });
      editors.push(editor);
      return editor;
    };
    expect(daemons(), 'no daemon before the first launch').to.deep.equal([]);

    const first = open();
    expect((await first.initialize()).agentInfo?.name).to.equal('acp-warden-demo');
    const started = daemons();
    expect(started, 'one daemon started').to.have.length(1);
    const [daemon] = started as [number];
    // In the background: a process group of its own, not the editor's bridge's.
    const stat = readFileSync(`/proc/${daemon}/stat`, 'utf8');
    expect(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]).to.equal(String(daemon));
    const log = join(state, 'acp-warden', 'serve.log');
    expect(readFileSync(log, 'utf8')).to.include(`(pid ${daemon})`);
    const sessionId = await first.newSession(project);
    const answered = await first.prompt(sessionId, 'hello from the first editor').outcome;
    expect(answered.error, first.stderr()).to.equal(undefined);
    expect(answered.text).to.include('You said: hello from the first editor.');
    await first.close();
    expect(isAlive(daemon), 'the daemon outlives the bridge that started it').to.equal(true);

    const second = open();
    await second.initialize();
    expect(daemons(), 'the second launch reuses the daemon').to.deep.equal([daemon]);
    const other = await second.newSession(project);
    expect((await second.prompt(other, 'and the second').outcome).stopReason).to.equal('end_turn');
    // `warden sessions`, run as the user runs it (the same PATH and state directory), lists both editors' sessions.
    const listed = spawnSync('warden', ['sessions', '--connect', `unix:${socket}`, '--json'], { env, cwd: project, encoding: 'utf8', timeout: 60_000 });
    expect(listed.status, listed.stderr).to.equal(0);
    expect((JSON.parse(listed.stdout) as { sessions: Array<{ sessionId: string }> }).sessions.map((session) => session.sessionId)).to.include.members([sessionId, other]);
    const agents = demoAgentsOf(daemon);
    expect(agents.length, 'the daemon runs the demo agent').to.be.at.least(1);
    await second.close();

    // Stopped as docs/serve.md says: kill <pid>, the pid from serve.log.
    const logged = Number(/listening on \S+ \(pid (\d+)\)/u.exec(readFileSync(log, 'utf8'))?.[1]);
    expect(logged).to.equal(daemon);
    process.kill(logged, 'SIGTERM');
    await expectGroupGone(daemon, 30_000);
    for (const pid of agents) await waitUntil(() => !isAlive(pid), `demo agent ${pid} to stop with the daemon`, 20_000);
    // The daemon's orphan reaper (a group of its own) exits once the daemon's end closes its stdin.
    await waitUntil(() => leftovers(state).length === 0, `nothing of the test left: ${leftovers(state).map((row) => row.cmdline.slice(-60)).join('; ')}`, 20_000);
    expect(existsSync(socket), 'the socket file removed').to.equal(false);
  });
});
