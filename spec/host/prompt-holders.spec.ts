/**
 * Issue 29's count of a prompt's holders: the layers that keep a record of one prompt in
 * flight on the Claude path (`warden acp`'s wiring, fake Claude Code), each asked through its
 * read-only inspection accessor (spec/support/prompt-holders.ts says how). The goal is 3 (the
 * connection's id map, the session actor, the adapter); until it is reached the spec asserts
 * today's count (so that no holder comes back) and the goal's case is pending, named with it.
 */
import { expect } from 'chai';
import { promptHolders } from '../support/prompt-holders.js';

const goal = 3;

/** Where it stands today: the most holders a prompt may have. */
const today = 4;

describe('the holders of a prompt in flight (Claude path, `warden acp` wiring)', function () {
  this.timeout(60_000);

  it(`no more than today's ${today} layers hold the prompt`, async () => {
    const holders = await promptHolders();
    expect(holders, holders.join(', ')).to.have.length.at.most(today);
    expect(holders, 'the session actor owns the prompt').to.include('session actor (its prompts)');
  });

  it.skip(`at most ${goal} layers hold the prompt (issue 29's goal, not reached: ${today})`);
});
