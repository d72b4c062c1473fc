import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

function warden(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [main, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('warden command', function () {
  this.timeout(60_000);

  it('demo: the demo agent as a real subprocess survives a kill -9 and a hang, fails cleanly in a crash loop, leaves no process', async () => {
    const { code, stdout, stderr } = await warden('demo');
    expect(code, stderr).to.equal(0);
    expect(stdout).to.contain('You said: hello.');
    expect(stdout).to.contain('[tool completed]');
    // Two sessions at once (issue 14): both answered, their words mixed, not one after the other.
    expect(stdout).to.match(/1< You said: what does a supervisor do\?\..*\(stop reason: end_turn\)/u);
    expect(stdout).to.match(/2< You said: and what does the journal keep\?\..*\(stop reason: end_turn\)/u);
    const switches = Number(/the sessions took turns (\d+) times/u.exec(stdout)?.[1] ?? 0);
    expect(switches, 'the two answers streamed interleaved').to.be.greaterThan(1);
    expect(stdout).to.match(/session restarting: Agent process was killed with SIGKILL \(restart 1\)/u);
    expect(stdout).to.match(/session restarting: Agent process hung \(no output for 1500 ms\) and was killed \(restart 2\)/u);
    expect(stdout).to.contain('session recovered after restart 2');
    expect(stdout).to.contain('< You said: still there?.');
    expect(stdout).to.contain('more than 3 restarts in 30000 ms: giving up');
    expect(stdout).to.match(/error: .*session demo-\S+ failed/u);
    expect(stdout).to.match(/still running: 0\./u);
    // Not a TTY here: no colour codes.
    expect(stdout).not.to.contain('\u001b[');
  });

  it('demo: a recovery notice is shown on a line of its own, never inside the agent\'s sentence (issue 28, defect 10)', async () => {
    const { code, stdout, stderr } = await warden('demo');
    expect(code, stderr).to.equal(0);
    const lines = stdout.split('\n');
    /** The agent's answer to `prompt` (its `<` line in the section that sent it), and the demo agent's whole sentence for it. */
    const answerTo = (prompt: string) => {
      const asked = lines.indexOf(`  > ${prompt}`);
      expect(asked, `the prompt ${prompt}`).to.be.above(-1);
      const said = lines.slice(asked).find((line) => line.startsWith('  < '))?.slice(4) ?? '';
      return { said, whole: `You said: ${prompt}. This is the acp-warden demo agent, answering word by word.` };
    };
    for (const prompt of ['a long answer that will be interrupted by a crash', 'a long answer during which the agent freezes']) {
      const { said, whole } = answerTo(prompt);
      // Cut by the fault, but nothing but the agent's own words: a start of its sentence.
      expect(said).to.match(/^You said: /u);
      expect(whole.startsWith(said), `"${said}" is a start of the agent's sentence`).to.equal(true);
    }
    const agentLines = lines.filter((line) => /^ {2}\d?< /u.test(line));
    expect(agentLines.filter((line) => line.includes('acp-warden warning') || line.includes('restarted')), 'agent lines holding a notice').to.deep.equal([]);
    // Each restart's notice on a line of its own, marked as warden's.
    expect(lines.filter((line) => /^ {2}! acp-warden warning: demo restarted: The agent process ended \(Agent process was killed with SIGKILL\)/u.test(line))).to.have.length(1);
    expect(lines.filter((line) => /^ {2}! acp-warden warning: demo restarted: The agent process ended \(Agent process hung \(no output for 1500 ms\) and was killed\)/u.test(line))).to.have.length(1);
  });

  it('--help on every command: its usage on stderr, status 0, nothing on stdout', async () => {
    for (const command of ['demo', 'demo-agent', 'acp', 'agents', 'chaos', 'inspect']) {
      const { code, stdout, stderr } = await warden(command, '--help');
      expect(code, command).to.equal(0);
      expect(stdout, command).to.equal('');
      expect(stderr, command).to.contain(`Usage: warden ${command}`);
    }
    const top = await warden('--help');
    expect(top.code).to.equal(0);
    expect(top.stderr).to.contain('"warden <command> --help" describes each command');
  });

  it('names a bad option and an unknown command on stderr with status 2', async () => {
    const inspect = await warden('inspect', '--port', 'nope');
    expect(inspect.code).to.equal(2);
    expect(inspect.stdout).to.equal('');
    expect(inspect.stderr).to.contain('warden inspect: --port expects a port number');
    const unknown = await warden('frobnicate');
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain('unknown command "frobnicate"');
    const badFlag = await warden('demo', '--duration', 'soon');
    expect(badFlag.code).to.equal(2);
    expect(badFlag.stderr).to.contain('warden demo: unknown option --duration');
  });
});

describe('warden chaos', function () {
  this.timeout(120_000);

  it('drives the demo agent through prompts under kill, hang and garbage faults: every prompt settles, no process is left', async () => {
    const { code, stdout, stderr } = await warden('chaos', '--agent', 'demo', '--duration', '6', '--rate', '2', '--seed', '11', '--json');
    const report = JSON.parse(stdout) as { faults: { kill: number; hang: number; garbage: number }; prompts: { sent: number; completed: number; unsettled: number }; processesLeaked: number; processesStarted: number; seed: number };
    expect(code, stderr).to.equal(0);
    expect(report.seed).to.equal(11);
    expect(report.faults.kill + report.faults.hang + report.faults.garbage).to.be.greaterThan(3);
    expect(report.prompts.unsettled).to.equal(0);
    expect(report.prompts.completed).to.be.greaterThan(0);
    expect(report.processesStarted).to.be.greaterThan(1);
    expect(report.processesLeaked).to.equal(0);
  });

  it('names bad options and the fix', async () => {
    const bad = await warden('chaos', '--agent', 'demo', '--faults', 'kill,flood');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('--faults takes a comma-separated list of kill, hang, garbage');
    const missing = await warden('chaos', '--agent', 'claude', '--agent-command', '/nonexistent/claude', '--duration', '1');
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain('/nonexistent/claude');
  });
});
