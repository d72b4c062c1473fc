/**
 * When the takeover loop looks (issue 17, docs/cluster.md "Failover"): the schedule as a pure
 * matrix (cluster/look-schedule.ts), then the loop on a real PostgreSQL (spec/support/postgres.ts;
 * skipped, saying why, without one). Its fallback tick is set to a minute in the database cases,
 * so a session taken within seconds can only have been taken by a look the loop scheduled from
 * what it read (a lease ending, its own outage guard lifting) or by a wake-up (`NOTIFY` of a
 * hand-over); each case also waits until the loop's next look is the tick's before it acts.
 */
import { expect } from 'chai';
import pg from 'pg';
import { lookMargin, nextLookIn, type LookSchedule } from '../../src/cluster/look-schedule.js';
import { startTakeover, takeoverApplicationName, type LookOutcome, type OrphanedSession, type Takeover, type TakeoverOptions } from '../../src/cluster/takeover.js';
import { clusterChannel, parseWakeUp } from '../../src/journal/wake-ups.js';
import { openPostgresJournal, type PostgresJournal } from '../../src/journal/postgres-journal.js';
import { queryRows, requirePostgres, startPostgres, type TestPostgres } from '../support/postgres.js';

describe('cluster/look-schedule: when the takeover loop looks next', () => {
  const interval = 1_000;
  const cases: ReadonlyArray<readonly [string, LookSchedule, number]> = [
    ['nothing ahead: the tick', { interval }, interval],
    ['a lease ends before the tick: just after it', { interval, leaseEndsIn: 300 }, 300 + lookMargin],
    ['a lease ends after the tick: the tick', { interval, leaseEndsIn: 5_000 }, interval],
    ['a lease ends within the margin of the tick: the tick', { interval, leaseEndsIn: interval - 10 }, interval],
    ['a lease ends right now: the margin', { interval, leaseEndsIn: 0 }, lookMargin],
    ['a lease already ran out (read late): not a moment ahead, the tick (no spin)', { interval, leaseEndsIn: -50 }, interval],
    ['the database settles before the tick: just after it', { interval, databaseSettlesIn: 400 }, 400 + lookMargin],
    ['the database settled long ago: the tick', { interval, databaseSettlesIn: -3_600_000 }, interval],
    ['the loop\'s own guard lifts before the tick: just after it', { interval, reachableIn: 200 }, 200 + lookMargin],
    ['the loop\'s own guard lifted: the tick', { interval, reachableIn: 0 }, interval],
    ['several moments ahead: the first', { interval, leaseEndsIn: 700, databaseSettlesIn: 500, reachableIn: 600 }, 500 + lookMargin],
    ['a lease before a guard: the lease', { interval, leaseEndsIn: 100, reachableIn: 600 }, 100 + lookMargin],
    ['every moment after the tick: the tick', { interval, leaseEndsIn: 2_000, databaseSettlesIn: 3_000, reachableIn: 4_000 }, interval],
    ['a margin of its own', { interval, margin: 5, leaseEndsIn: 300 }, 305],
    ['a tick shorter than the margin: the tick', { interval: 10, leaseEndsIn: 0 }, 10],
  ];
  for (const [name, schedule, expected] of cases) {
    it(name, () => {
      expect(nextLookIn(schedule)).to.equal(expected);
    });
  }
});

describe('journal/wake-ups: the payload of a NOTIFY', () => {
  it('names the host and what happened; anything else is unknown (it still wakes, it says nothing)', () => {
    expect(parseWakeUp('{"host":"h1","event":"handedOver"}')).to.deep.equal({ host: 'h1', event: 'handedOver' });
    expect(parseWakeUp('{"host":"h1","event":"exploded"}')).to.equal(undefined);
    expect(parseWakeUp('not json')).to.equal(undefined);
    expect(parseWakeUp(undefined)).to.equal(undefined);
  });
});

describe('cluster/takeover on a real PostgreSQL: looks when a lease can have run out, and on a hand-over', function () {
  this.timeout(90_000);
  /** The fallback tick of the loops under test: far longer than any case waits. */
  const tick = 60_000;
  let server: TestPostgres;
  let databases = 0;
  let url: string;
  const opened: Array<{ close(): Promise<void> }> = [];

  before(async function () {
    requirePostgres(this);
    server = await startPostgres();
  });
  after(async () => server?.stop());
  beforeEach(async () => {
    url = await server.createDatabase(`takeover_${process.pid}_${++databases}`);
  });
  afterEach(async () => {
    for (const one of opened.splice(0).reverse()) await one.close().catch(() => undefined);
  });

  /** Polls `check` until it holds, failing after `within` ms. */
  async function eventually(check: () => boolean | Promise<boolean>, what: string, within = 30_000): Promise<void> {
    const deadline = Date.now() + within;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what}: not in time`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** One query on a connection of its own. */
  const queryOnce = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => queryRows<R>(url, text, values);

  /** A cluster member's journal (no heartbeat of its own unless `renew`). */
  async function member(lease: number, port: number, renew = false): Promise<PostgresJournal> {
    const journal = await openPostgresJournal(url, { lease, renew, advertise: `ws://127.0.0.1:${port}/acp` });
    opened.push(journal);
    return journal;
  }

  /** A takeover loop for `taker` with the minute-long tick; its looks and takes recorded (`at`: Date.now(), comparable with the database's stamps on this machine). */
  function loop(taker: PostgresJournal, lease: number, options: Partial<TakeoverOptions> & { readonly claim?: boolean } = {}) {
    const looks: Array<LookOutcome & { readonly at: number }> = [];
    const taken: Array<OrphanedSession & { readonly at: number }> = [];
    const takeover: Takeover = startTakeover(url, {
      hostId: taker.hostId,
      lease,
      interval: tick,
      take: (orphan) => {
        taken.push({ ...orphan, at: Date.now() });
        if (options.claim) void taker.claim(orphan.sessionId).catch(() => undefined);
      },
      looked: (look) => looks.push({ ...look, at: Date.now() }),
      ...options,
    });
    opened.push(takeover);
    /** Resolves once a look after the `from`-th has left the loop idle until its tick (nothing scheduled sooner). */
    const idleAfter = (from: number) => eventually(() => looks.slice(from).some((look) => look.nextIn > tick / 2), 'the loop idle until its tick');
    return { takeover, looks, taken, idleAfter };
  }

  /** Whether the loop's wake-up connection LISTENs now. */
  const listening = async () =>
    (await queryOnce("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle' AND query = $2", [takeoverApplicationName, `LISTEN ${clusterChannel}`])).length === 1;

  it('a lost owner\'s session is taken just after its lease runs out, by a look scheduled from the lease, not at the tick', async () => {
    const owner = await member(3_000, 7001);
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const [row] = await queryOnce<{ lease_until: Date }>('SELECT lease_until FROM hosts WHERE host_id = $1', [owner.hostId]);
    const leaseUntil = (row as { lease_until: Date }).lease_until.getTime();
    const taker = await member(1_000, 7002);
    const { taken, looks } = loop(taker, 1_000, { wakeUps: false });
    await eventually(() => taken.length > 0, 'the session taken');
    expect(taken.map(({ sessionId, previousOwner, handedOver }) => ({ sessionId, previousOwner, handedOver }))).to.deep.equal([{ sessionId: 's1', previousOwner: owner.hostId, handedOver: false }]);
    const at = (taken[0] as { at: number }).at;
    // Never before the lease ran out; long before the tick (a minute): only the scheduled look explains it.
    expect(at, 'taken after the owner\'s lease ended').to.be.at.least(leaseUntil);
    expect(at - leaseUntil, 'ms from the lease\'s end to the take').to.be.below(10_000);
    // The look before the one that took was told to come back before the tick (the lease's end).
    const taking = looks.findIndex((look) => look.taken.length > 0);
    expect(taking).to.be.greaterThan(0);
    expect((looks[taking - 1] as LookOutcome).nextIn).to.be.below(tick);
    // No spinning meanwhile: a few looks in the 3 s (the first, the guard's, the lease's), not one every margin.
    expect(taking + 1).to.be.below(10);
  });

  it('a take that throws loses that orphan for one look only: a warning, the loop goes on, and a later look hands it over again', async () => {
    const owner = await member(1_000, 7001);
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const taker = await member(1_000, 7002);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      let attempts = 0;
      const handed: string[] = [];
      // The tick of a real loop (lease / 2): the look after a failed take comes at it.
      const { takeover } = loop(taker, 1_000, {
        wakeUps: false,
        interval: 500,
        take: (orphan) => {
          if (++attempts === 1) throw new Error('the hub is gone');
          handed.push(orphan.sessionId);
        },
      });
      await eventually(() => handed.length > 0, 'the orphan handed over by a later look');
      expect(attempts).to.be.at.least(2);
      expect(handed[0]).to.equal('s1');
      await eventually(() => warnings.some((message) => message.includes('the hub is gone')), 'the warning');
      expect(await takeover.look(), 'the loop still looks').to.be.an('array');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a loop just started takes nothing in its first lease, then takes at once by a look scheduled for its guard\'s end', async () => {
    const owner = await member(1_000, 7001);
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    await eventually(async () => (await queryOnce("SELECT 1 FROM hosts WHERE host_id = $1 AND lease_until < now() - interval '100 milliseconds'", [owner.hostId])).length === 1, 'the owner\'s lease to run out');
    const taker = await member(2_000, 7002);
    const startedAt = Date.now();
    const { taken, looks } = loop(taker, 2_000, { wakeUps: false });
    await eventually(() => taken.length > 0, 'the session taken');
    expect(looks[0]?.taken, 'the first look, at start, takes nothing').to.deep.equal([]);
    const at = (taken[0] as { at: number }).at;
    expect(at - startedAt, 'ms from the start to the take').to.be.at.least(2_000).and.below(12_000);
  });

  it('a hand-over wakes the loop through NOTIFY: taken at once, with the tick a minute away and the owner\'s lease a minute long before it ended it', async () => {
    const owner = await member(tick, 7001);
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const taker = await member(2_000, 7002);
    const { taken, idleAfter } = loop(taker, 2_000, { claim: true });
    await eventually(listening, 'the loop to LISTEN');
    // Its guard lifted, nothing ahead before the tick: only a wake-up can make it look now.
    await idleAfter(0);
    expect(taken).to.deep.equal([]);
    await owner.startHandOver();
    const handing = performance.now();
    const left = await owner.handOver(20_000);
    const handOverMs = performance.now() - handing;
    expect(left, 'sessions left on the owner').to.equal(0);
    expect(handOverMs, 'ms to hand over').to.be.below(10_000);
    expect(taken.map(({ sessionId, handedOver }) => ({ sessionId, handedOver }))).to.deep.equal([{ sessionId: 's1', handedOver: true }]);
    expect(taker.epochOf('s1')).to.equal(2);
  });

  it('without wake-ups the same hand-over waits for a scheduled look (the control of the case above)', async () => {
    const owner = await member(tick, 7001);
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const taker = await member(2_000, 7002);
    const { taken, looks, idleAfter } = loop(taker, 2_000, { claim: true, wakeUps: false });
    await idleAfter(0);
    const before = looks.length;
    await owner.startHandOver();
    expect(await owner.handOver(1_000), 'sessions left on the owner').to.equal(1);
    // No look ran meanwhile: nothing woke the loop, nothing was scheduled before the tick.
    expect(looks.length).to.equal(before);
    expect(taken).to.deep.equal([]);
  });

  it('after a restart of PostgreSQL the loop LISTENs again and a hand-over still wakes it', async () => {
    const owner = await member(tick, 7001);
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const taker = await member(2_000, 7002);
    const { taken, looks, idleAfter } = loop(taker, 2_000, { claim: true });
    await eventually(listening, 'the loop to LISTEN');
    await idleAfter(0);
    const before = looks.length;
    await server.restart();
    await eventually(listening, 'the loop to LISTEN again', 20_000);
    // The restart guard: a look scheduled for the database's first lease, then idle until the tick.
    await idleAfter(before);
    expect(taken).to.deep.equal([]);
    await owner.startHandOver();
    expect(await owner.handOver(20_000), 'sessions left on the owner').to.equal(0);
    expect(taken.map(({ sessionId, handedOver }) => ({ sessionId, handedOver }))).to.deep.equal([{ sessionId: 's1', handedOver: true }]);
  });

  it('close() stops it all: no look, no take, no connection left', async () => {
    const owner = await member(1_500, 7001);
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const taker = await member(1_000, 7002);
    const { takeover, looks, taken } = loop(taker, 1_000);
    await eventually(listening, 'the loop to LISTEN');
    await eventually(() => looks.length > 0, 'a first look');
    await takeover.close();
    const seen = looks.length;
    expect(await takeover.look()).to.deep.equal([]);
    await eventually(async () => (await queryOnce('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [takeoverApplicationName])).length === 0, 'the loop\'s connections to end', 10_000);
    // The owner's lease runs out, and a wake-up is sent: nobody looks.
    await eventually(async () => (await queryOnce('SELECT 1 FROM hosts WHERE host_id = $1 AND lease_until < now()', [owner.hostId])).length === 1, 'the owner\'s lease to run out');
    await queryOnce(`SELECT pg_notify('${clusterChannel}', '{}')`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(looks.length).to.equal(seen);
    expect(taken).to.deep.equal([]);
  });
});
