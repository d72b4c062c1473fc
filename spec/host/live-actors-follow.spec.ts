import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, createMachine, fromCallback, type AnyActorRef } from 'xstate';
import { createHost, type Host } from '../../src/runtime/host.js';
import { createLiveActors } from '../../src/host/live-actors.js';
import type { LiveActorView, LiveViewState } from '../../src/inspect/live-view-model.js';
import { waitUntil } from '../support/processes.js';

const idsOf = (refs: Iterable<{ ref: AnyActorRef }>) => [...refs].map(({ ref }) => ref.id);

/** Every actor of a view's trees, children after their parent. */
const all = (actors: readonly LiveActorView[]): LiveActorView[] => actors.flatMap((actor) => [actor, ...all(actor.children ?? [])]);

describe('live actors learnt from the actor system, no inspection observer', () => {
  it('follow(): every actor of the system is remembered when it starts (invoked children included) and forgotten when it stops', () => {
    const live = createLiveActors();
    const inner = createMachine({ id: 'inner', initial: 'idle', states: { idle: {} } });
    const root = createActor(createMachine({ id: 'root', initial: 'on', states: { on: { invoke: [{ id: 'maker', src: fromCallback(() => () => {}) }, { id: 'inner', src: inner }], on: { off: 'off' } }, off: {} } }));
    live.follow(root);
    root.start();
    expect(idsOf(live.values())).to.deep.equal([root.id, 'maker', 'inner']);
    root.send({ type: 'off' });
    expect(idsOf(live.values())).to.deep.equal([root.id]);
    root.stop();
    expect(idsOf(live.values())).to.deep.equal([]);
  });

  describe('a host without an inspector', () => {
    let dir: string;
    let host: Host | undefined;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'warden-live-follow-'))));
    afterEach(async () => {
      await host?.stop();
      host = undefined;
      rmSync(dir, { recursive: true, force: true });
    });

    /** A host of the demo agent with one session that has answered a prompt, and its agent process. */
    const promptedHost = async () => {
      host = createHost({ store: ':memory:', agentOptions: { env: { DEMO_WORD_DELAY_MS: '1' } } });
      const session = await host.newSession({ cwd: dir });
      expect((await session.prompt('hello').result).stopReason).to.equal('end_turn');
      const [agentProcess] = host.processes();
      if (!agentProcess) throw new Error('the demo agent has no process');
      return { host, session, agentProcess };
    };

    it('a live view served after a prompt shows the session, its agent process and its supervisor, and what happens from then on', async function () {
      this.timeout(60_000);
      const { host, session, agentProcess } = await promptedHost();

      const view = await host.inspect.serve();
      try {
        const state = async () => (await (await fetch(`${view.url}state.json`)).json()) as LiveViewState;
        const before = await state();
        const actors = before.sources.flatMap((source) => all(source.roots));
        expect(actors.filter((actor) => actor.kind === 'port' && actor.pid === agentProcess.pid && actor.status === 'active'), 'the agent process').to.have.length(1);
        expect(actors.some((actor) => actor.kind === 'supervisor' && actor.label === 'agent'), 'the agent supervisor').to.equal(true);
        const machine = before.machines.find((row) => row.sessionId === session.sessionId);
        expect(machine?.state, 'the session machine').to.equal('ready');
        // The transition it took last, before the view was served: lit at once (issue 18).
        expect(machine?.last).to.deep.include({ from: 'prompting', event: 'prompt.settled', to: 'ready' });
        expect(machine?.last?.transitions).to.deep.equal([{ source: 'prompting', event: 'prompt.settled', targets: ['ready'] }]);

        // From now on the view hears the events: a kill -9 of the agent is a restart, its new process is shown.
        process.kill(agentProcess.pid, 'SIGKILL');
        await waitUntil(() => host.processes().some((entry) => entry.pid !== agentProcess.pid) && session.state() === 'ready', 'the agent process to be restarted', 30_000);
        const second = host.processes()[0];
        if (!second) throw new Error('no agent process after the restart');
        const restarted = async () => {
          const ports = (await state()).sources.flatMap((source) => all(source.roots)).filter((actor) => actor.kind === 'port' && actor.status === 'active');
          return ports.length === 1 && ports[0]!.pid === second.pid && ports[0]!.restarts === 1;
        };
        // Polled (60 s deadline): the view hears the restart as the host's actors report it.
        await waitUntil(restarted, 'the restarted agent process in the view, one restart counted', 60_000, 100);
      } finally {
        await view.close();
      }
    });

    it('a view closed and served again shows what happened while none was open (a kill -9 of the agent: the new process, not the old)', async function () {
      this.timeout(60_000);
      const { host, session, agentProcess: first } = await promptedHost();
      await (await host.inspect.serve()).close();

      process.kill(first.pid, 'SIGKILL');
      await waitUntil(() => host.processes().some((entry) => entry.pid !== first.pid) && session.state() === 'ready', 'the agent process to be restarted', 30_000);
      const second = host.processes()[0];
      if (!second) throw new Error('no agent process after the restart');
      expect((await session.prompt('again').result).stopReason).to.equal('end_turn');

      const view = await host.inspect.serve();
      try {
        const state = (await (await fetch(`${view.url}state.json`)).json()) as LiveViewState;
        const ports = state.sources.flatMap((source) => all(source.roots)).filter((actor) => actor.kind === 'port' && actor.status === 'active');
        expect(ports.map((port) => port.pid)).to.deep.equal([second.pid]);
        expect(state.machines.find((row) => row.sessionId === session.sessionId)?.state).to.equal('ready');
      } finally {
        await view.close();
      }
    });
  });
});
