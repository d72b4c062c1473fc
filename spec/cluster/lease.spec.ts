import { expect } from 'chai';
import { leaseHeld, leaseLeft, leaseStanding } from '../../src/journal/lease.js';

describe('journal/lease: the self-fencing view on a simulated monotonic clock', () => {
  const lease = 2_000;
  it('held until a whole lease has passed since the send of the last successful renewal', () => {
    expect(leaseStanding(1_000, 1_000, lease)).to.equal('held');
    expect(leaseStanding(1_000, 2_999, lease)).to.equal('held');
    expect(leaseHeld(1_000, 2_999, lease)).to.equal(true);
    expect(leaseLeft(1_000, 2_500, lease)).to.equal(500);
  });
  it('suspended from one lease (no more prompts), stopped from two (agents stopped)', () => {
    expect(leaseStanding(1_000, 3_000, lease)).to.equal('suspended');
    expect(leaseHeld(1_000, 3_000, lease)).to.equal(false);
    expect(leaseLeft(1_000, 3_000, lease)).to.equal(0);
    expect(leaseStanding(1_000, 4_999, lease)).to.equal('suspended');
    expect(leaseStanding(1_000, 5_000, lease)).to.equal('stopped');
  });
  it('a host frozen past two leases sees it at its first look; a renewal sent later holds it again', () => {
    let sentAt = 0;
    let now = 0;
    const steps: string[] = [];
    for (const advance of [600, 600, 10_000]) {
      now += advance;
      steps.push(leaseStanding(sentAt, now, lease));
    }
    expect(steps).to.deep.equal(['held', 'held', 'stopped']);
    sentAt = now;
    now += 10;
    expect(leaseStanding(sentAt, now, lease)).to.equal('held');
  });
});
