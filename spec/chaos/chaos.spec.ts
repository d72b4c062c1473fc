/**
 * The chaos walk: a model-based random walk (fast-check commands) over sessions of fake
 * Claude Code CLIs replaying recorded transcripts, with faults — kill -9 idle, mid-prompt and
 * mid-permission, SIGSTOP hangs (and SIGCONT after the restart), garbage, half and 2 MiB lines,
 * stdin closed by the child (EPIPE), memory leaks (recycled or killed by the memory limits,
 * exit memory_exceeded), crash loops past the restart intensity, spawn failures,
 * the host stopped during a restart, a cancel racing a crash (ordered by fc.scheduler), and
 * timing faults in the journal (a host whose journal reads and commits land at seeded random moments).
 * After every step: every request answered at most once (exactly once when quiet), at most one
 * live process per session (none after stop, read in /proc), no port without a session,
 * restarts within the intensity, every acknowledged update in the journal, also after a new
 * host opened it, and delivery exact by seq (each journaled update once, in order, none missing
 * once quiet). The seed is printed; a failure prints how to replay it.
 */
import fc from 'fast-check';
import { endWalk, chaosCommands, type ChaosModel } from './chaos-commands.js';
import { chaosProfile } from './chaos-profile.js';
import { ChaosWorld } from './chaos-world.js';

const profile = chaosProfile();

describe(`chaos walk (${profile.name} profile)`, function () {
  it(`holds every invariant over ${profile.numRuns} walks of up to ${profile.maxCommands} steps`, async function () {
    // The quick profile stops starting walks after its time limit; asked-for walks run to the end.
    this.timeout(profile.timeLimitMs ? profile.timeLimitMs + 120_000 : 0);
    const seed = profile.seed ?? (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
    const totals = { walks: 0, steps: 0, faults: 0, restarts: 0, hostRestarts: 0 };
    let lastLog: string[] = [];
    const property = fc.asyncProperty(fc.commands(chaosCommands, { maxCommands: profile.maxCommands, size: 'max', ...(profile.replayPath ? { replayPath: profile.replayPath } : {}) }), async (commands) => {
      const world = new ChaosWorld();
      const model: ChaosModel = { sessions: [], maxSessions: 5 };
      try {
        await world.startHost();
        // Every walk starts with one session of each agent, so that faults have something to hit.
        for (const agent of ['claude', 'permission', 'flaky'] as const) {
          await world.newSession(agent);
          model.sessions.push({ agent, status: 'open' });
        }
        await fc.asyncModelRun(() => ({ model, real: world }), commands);
        await endWalk(model, world);
        totals.walks++;
        totals.steps += world.log.filter((line) => !line.line.startsWith('  ·')).length;
        totals.faults += world.faults;
        totals.restarts += [...world.restarts.values()].reduce((sum, times) => sum + times.length, 0);
        totals.hostRestarts += world.generation - 1;
      } finally {
        lastLog = world.log.map((line) => `${String(line.at).padStart(6)} ms  ${line.line}`);
        await world.dispose();
      }
    });
    console.log(`      chaos seed ${seed} (replay: npm run chaos -- --seed ${seed})`);
    try {
      await fc.assert(property, {
        numRuns: profile.numRuns,
        seed,
        ...(profile.path ? { path: profile.path } : {}),
        endOnFailure: !profile.shrink,
        ...(profile.timeLimitMs ? { interruptAfterTimeLimit: profile.timeLimitMs } : {}),
      });
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? `\ncaused by: ${error.cause.stack ?? error.cause.message}` : '';
      const message = (error instanceof Error ? error.message : String(error)) + cause;
      const path = /path: "([^"]*)"/u.exec(message)?.[1];
      const hint = `replay: npm run chaos -- --seed ${seed}${path ? ` --path ${path}` : ''}`;
      throw Object.assign(new Error(`${message}\n\n${hint}\n\nthe failing walk, step by step:\n${lastLog.join('\n')}`), { stack: undefined });
    }
    console.log(`      ${totals.walks} walks, ${totals.steps} steps, ${totals.faults} faults, ${totals.restarts} restarts, ${totals.hostRestarts} host restarts`);
  });
});
