/**
 * The first port of a process spawns once execa is loaded (src/port/execa-loader.ts: it is
 * not imported at startup, so that `warden acp` answers `initialize` sooner). Each case runs
 * in a fresh Node process (spec/support/first-spawn-driver.ts), where nothing loaded execa
 * yet: a write sent at once waits and is answered; a stop asked at once ends the port
 * `stopped` without spawning anything; and no process is left either way.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { exitCodeOf, killGroups, stderrOf } from '../support/warden-process.js';
import { expectGroupGone } from '../support/processes.js';
import type { ChildProcess } from 'node:child_process';

const tsx = import.meta.resolve('tsx');
const driver = fileURLToPath(new URL('../support/first-spawn-driver.ts', import.meta.url));
const launched: ChildProcess[] = [];

interface Facts {
  readonly answer?: { result?: { pid?: number } };
  readonly spawned: number[];
  readonly end: { output?: { kind?: string; detail?: { reason?: { kind?: string } } }; error?: string; stopped?: string };
  readonly status: string;
}

async function drive(mode: 'write' | 'stop' | 'kill' | 'busy'): Promise<Facts> {
  const child = spawn(process.execPath, ['--import', tsx, driver, mode], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  launched.push(child);
  const stderr = stderrOf(child);
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  expect(await exitCodeOf(child), stderr()).to.equal(0);
  return JSON.parse(stdout) as Facts;
}

describe('port: the first spawn of a process (execa loaded on demand)', function () {
  this.timeout(60_000);
  afterEach(async () => {
    await killGroups(launched.splice(0), { descendants: true });
  });

  it('a request written right after start reaches the CLI and is answered; the stop leaves nothing', async () => {
    const facts = await drive('write');
    expect(facts.spawned).to.have.lengthOf(1);
    expect(facts.answer?.result?.pid).to.equal(facts.spawned[0]);
    expect(facts.end.output?.kind).to.equal('shutdown');
    expect(facts.end.output?.detail?.reason?.kind).to.equal('stopped');
    await expectGroupGone(facts.spawned[0]);
  });

  it('a graceful stop asked before the spawn ends the port stopped, and no process is spawned', async () => {
    const facts = await drive('stop');
    expect(facts.end.error).to.equal(undefined);
    expect(facts.end.output?.kind).to.equal('shutdown');
    expect(facts.end.output?.detail?.reason?.kind).to.equal('stopped');
    expect(facts.spawned).to.deep.equal([]);
  });

  it('busy said before the spawn arms the watchdog: a silent CLI is killed as hung', async () => {
    const facts = await drive('busy');
    expect(facts.spawned).to.have.lengthOf(1);
    expect(facts.end.error, 'the port failed').to.be.a('string').that.includes('hung');
    await expectGroupGone(facts.spawned[0]);
  });

  it('an actor stopped before the spawn spawns nothing afterwards', async () => {
    const facts = await drive('kill');
    expect(facts.status).to.equal('stopped');
    expect(facts.spawned).to.deep.equal([]);
  });
});
