import { expect } from 'chai';
import { createActor, SimulatedClock, type AnyActorRef } from 'xstate';
import {
  countChildren,
  createDynamicSupervisor,
  createSupervisor,
  shutdown,
  startChild,
  startTemplateChild,
  SupervisorSpecError,
  terminateChild,
  whichChildren,
} from '../../src/supervision/index.js';
import { journaled, recordEvents, tell, trappingWorker, worker } from '../support/children.js';

function start(logic: Parameters<typeof createActor>[0]) {
  const clock = new SimulatedClock();
  const actor = createActor(logic, { clock, id: 'sessions' });
  const events = recordEvents(actor);
  actor.start();
  return { actor, clock, events };
}

describe('dynamic supervisor', () => {
  it('starts with no children and adds them at run time, generating ids when none is given', async () => {
    const { actor } = start(createDynamicSupervisor({ name: 'sessions' }));
    expect(countChildren(actor)).to.deep.equal({ specs: 0, active: 0, supervisors: 0, workers: 0 });
    const first = await startChild(actor, { start: { logic: worker } });
    const second = await startChild(actor, { id: 'named', start: { logic: worker } });
    expect(first).to.include({ ok: true, id: 'sessions-1' });
    expect(second).to.include({ ok: true, id: 'named' });
    expect(whichChildren(actor).map((row) => row.id)).to.deep.equal(['sessions-1', 'named']);
    actor.stop();
  });

  it('restarts a crashed child one_for_one and removes one that is not restarted', async () => {
    const { actor } = start(createDynamicSupervisor());
    await startChild(actor, { id: 'p', start: { logic: worker } });
    await startChild(actor, { id: 't', restart: 'transient', start: { logic: worker } });
    const p = whichChildren(actor)[0]?.ref;
    tell(p, { type: 'crash' });
    expect(whichChildren(actor)[0]?.ref).to.not.equal(p);
    tell(whichChildren(actor)[1]?.ref, { type: 'finish' });
    expect(whichChildren(actor).map((row) => row.id)).to.deep.equal(['p']);
    actor.stop();
  });

  it('refuses children beyond maxChildren, counting children that wait to restart', async () => {
    const { actor, clock } = start(createDynamicSupervisor({ maxChildren: 2 }));
    await startChild(actor, { id: 'a', start: { logic: worker }, backoff: { minDelay: 1000, maxDelay: 1000, jitter: 0 } });
    await startChild(actor, { id: 'b', start: { logic: worker } });
    expect(await startChild(actor, { id: 'c', start: { logic: worker } })).to.deep.equal({ ok: false, reason: 'max_children' });
    tell(whichChildren(actor)[0]?.ref, { type: 'crash' });
    expect(whichChildren(actor)[0]).to.include({ id: 'a', status: 'restarting' });
    // elixir-lang/elixir#7655: a restarting child must still count.
    expect(await startChild(actor, { id: 'c', start: { logic: worker } })).to.deep.equal({ ok: false, reason: 'max_children' });
    clock.increment(1000);
    expect(whichChildren(actor)[0]).to.include({ id: 'a', status: 'running' });
    expect(await terminateChild(actor, 'b')).to.deep.equal({ ok: true });
    expect(await startChild(actor, { id: 'c', start: { logic: worker } })).to.include({ ok: true });
    actor.stop();
  });

  it('terminateChild removes the child after its graceful shutdown', async () => {
    const { actor, clock } = start(createDynamicSupervisor());
    await startChild(actor, { id: 'slow', start: { logic: trappingWorker, input: { stopDelay: 50 } } });
    const pending = terminateChild(actor, 'slow');
    expect(whichChildren(actor)[0]).to.include({ status: 'terminating' });
    clock.increment(50);
    expect(await pending).to.deep.equal({ ok: true });
    expect(whichChildren(actor)).to.have.length(0);
    expect(await terminateChild(actor, 'slow')).to.deep.equal({ ok: false, reason: 'not_found' });
    actor.stop();
  });

  it('builds children from its template (simple_one_for_one)', async () => {
    const journal: string[] = [];
    const logic = journaled(journal);
    const { actor } = start(createDynamicSupervisor<{ name: string }>({
      template: (args) => ({ start: { logic, input: args } }),
    }));
    expect(await startTemplateChild(actor, { name: 'one' })).to.include({ ok: true });
    expect(await startTemplateChild(actor, { name: 'two' })).to.include({ ok: true });
    expect(journal).to.deep.equal(['start:one', 'start:two']);
    const plain = start(createDynamicSupervisor()).actor;
    expect(await startTemplateChild(plain, {})).to.deep.equal({ ok: false, reason: 'no_template' });
    actor.stop();
    plain.stop();
  });

  it('stops its children concurrently on shutdown, each within its own shutdown time', async () => {
    const { actor, clock } = start(createDynamicSupervisor());
    await startChild(actor, { id: 'a', start: { logic: trappingWorker, input: { stopDelay: 100 } } });
    await startChild(actor, { id: 'b', start: { logic: trappingWorker, input: { stopDelay: 100 } } });
    const refs = whichChildren(actor).map((row) => row.ref as AnyActorRef);
    const done = shutdown(actor);
    expect(refs.map((ref) => ref.getSnapshot().value)).to.deep.equal(['stopping', 'stopping']);
    clock.increment(100);
    expect(await done).to.deep.equal({ kind: 'shutdown' });
  });

  it('a shutdown during a terminateChild still stops the other children concurrently', async () => {
    const { actor, clock } = start(createDynamicSupervisor());
    for (const id of ['a', 'b', 'c']) await startChild(actor, { id, start: { logic: trappingWorker, input: { stopDelay: 100 } } });
    const terminated = terminateChild(actor, 'a');
    const done = shutdown(actor);
    expect(whichChildren(actor).map((row) => row.status)).to.deep.equal(['terminating', 'terminating', 'terminating']);
    clock.increment(100);
    expect(actor.getSnapshot().status).to.equal('done');
    expect(await terminated).to.deep.equal({ ok: true });
    expect(await done).to.deep.equal({ kind: 'shutdown' });
  });

  it('exceeds intensity like any supervisor and can itself be supervised', async () => {
    const sessions = createDynamicSupervisor({ name: 'sessions', intensity: 1 });
    const { actor } = start(createSupervisor({ name: 'host', children: [{ id: 'sessions', start: { logic: sessions } }] }));
    const sessionsRef = whichChildren(actor)[0]?.ref as AnyActorRef;
    await startChild(sessionsRef, { id: 's1', start: { logic: worker } });
    tell(whichChildren(sessionsRef)[0]?.ref, { type: 'crash' });
    tell(whichChildren(sessionsRef)[0]?.ref, { type: 'crash' });
    expect(sessionsRef.getSnapshot().status).to.equal('done');
    const restarted = whichChildren(actor)[0]?.ref as AnyActorRef;
    expect(restarted).to.not.equal(sessionsRef);
    expect(countChildren(restarted).specs).to.equal(0);
    actor.stop();
  });

  it('a template that throws answers templateFailed; the supervisor and its other children go on', async () => {
    const { actor } = start(createDynamicSupervisor<{ fail: boolean }>({
      template: (args) => {
        if (args.fail) throw new Error('bad session config');
        return { start: { logic: worker } };
      },
    }));
    const good = await startTemplateChild(actor, { fail: false });
    const bad = await startTemplateChild(actor, { fail: true });
    expect((bad as { reason: { templateFailed: Error } }).reason.templateFailed.message).to.equal('bad session config');
    expect(actor.getSnapshot().status).to.equal('active');
    expect(whichChildren(actor).map((row) => row.id)).to.deep.equal([(good as { id: string }).id]);
    actor.stop();
  });

  it('rejects invalid options', () => {
    expect(() => createDynamicSupervisor({ maxChildren: -1 })).to.throw(SupervisorSpecError, /maxChildren/);
    expect(() => createDynamicSupervisor({ intensity: 1.5 })).to.throw(SupervisorSpecError, /intensity/);
  });
});
