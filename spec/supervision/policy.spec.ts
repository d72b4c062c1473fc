import { expect } from 'chai';
import {
  addRestart,
  autoShutdownTriggered,
  describeExit,
  errorExit,
  exitFromOutput,
  isNormalExit,
  killedExit,
  normalExit,
  restartGroup,
  serializeExit,
  shouldRestart,
  shutdownExit,
} from '../../src/supervision/index.js';

describe('restart policy', () => {
  it('shouldRestart is total over restart type × exit reason', () => {
    const reasons = [normalExit, shutdownExit(), shutdownExit('x'), errorExit(new Error('e'))];
    expect(reasons.map((reason) => shouldRestart('permanent', reason))).to.deep.equal([true, true, true, true]);
    expect(reasons.map((reason) => shouldRestart('transient', reason))).to.deep.equal([false, false, false, true]);
    expect(reasons.map((reason) => shouldRestart('temporary', reason))).to.deep.equal([false, false, false, false]);
  });

  it('restartGroup picks the failed child, all children, or the failed child and its followers', () => {
    const order = ['a', 'b', 'c', 'd'];
    expect(restartGroup('one_for_one', order, 'b')).to.deep.equal(['b']);
    expect(restartGroup('one_for_all', order, 'b')).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(restartGroup('rest_for_one', order, 'b')).to.deep.equal(['b', 'c', 'd']);
    expect(restartGroup('rest_for_one', order, 'd')).to.deep.equal(['d']);
  });

  it('autoShutdown: any fires at once, all when no other significant child is left', () => {
    expect(autoShutdownTriggered('never', 0)).to.equal(false);
    expect(autoShutdownTriggered('any_significant', 3)).to.equal(true);
    expect(autoShutdownTriggered('all_significant', 1)).to.equal(false);
    expect(autoShutdownTriggered('all_significant', 0)).to.equal(true);
  });
});

describe('restart intensity window', () => {
  it('allows intensity restarts in a period and refuses the next', () => {
    let window: readonly number[] = [];
    const verdicts = [0, 10, 20, 30].map((now) => {
      const verdict = addRestart(window, now, 3, 1000);
      window = verdict.window;
      return verdict.allowed;
    });
    expect(verdicts).to.deep.equal([true, true, true, false]);
  });

  it('counts an entry exactly one period old, as OTP does, and drops older ones', () => {
    expect(addRestart([0], 1000, 1, 1000)).to.deep.equal({ allowed: false, window: [0, 1000] });
    expect(addRestart([0], 1001, 1, 1000)).to.deep.equal({ allowed: true, window: [1001] });
  });

  it('does not mutate the window it is given', () => {
    const window = Object.freeze([5]);
    addRestart(window, 6, 3, 100);
    expect(window).to.deep.equal([5]);
  });
});

describe('exit reasons', () => {
  it('normal and shutdown are normal exits, errors and kills are not', () => {
    expect([normalExit, shutdownExit(), shutdownExit({ why: 1 }), errorExit('x'), killedExit].map(isNormalExit))
      .to.deep.equal([true, true, true, false, false]);
  });

  it('a done output that is an exit reason is that exit; any other output is normal', () => {
    expect(exitFromOutput(shutdownExit('bye'))).to.deep.equal({ kind: 'shutdown', detail: 'bye' });
    expect(exitFromOutput({ answer: 42 })).to.deep.equal({ kind: 'normal' });
    expect(exitFromOutput(undefined)).to.deep.equal({ kind: 'normal' });
  });

  it('serialises errors as name, message and stack instead of {}', () => {
    const serialized = serializeExit(errorExit(new TypeError('bad'))) as { error: Record<string, unknown> };
    expect(serialized.error).to.include({ name: 'TypeError', message: 'bad' });
    expect(serialized.error.stack).to.be.a('string');
    const nested = serializeExit(shutdownExit({ failedToStartChild: 'x', cause: new Error('no') })) as { detail: { cause: { message: string } } };
    expect(nested.detail.cause.message).to.equal('no');
    expect(JSON.parse(JSON.stringify(serialized))).to.deep.equal(serialized);
  });

  it('describes exits in one line', () => {
    expect(describeExit(errorExit(new Error('boom')))).to.equal('error: Error: boom');
    expect(describeExit(shutdownExit('reached_max_restart_intensity'))).to.equal('shutdown (reached_max_restart_intensity)');
  });
});
