import { expect } from 'chai';
import { commandTitle, decisionFor, errorMessageOf } from '../../src/adapters/codex/mapping.js';
import { StderrRing } from '../../src/port/stderr-ring.js';

describe('Codex mapping details found with the real CLI', () => {
  const offered = ['accept', { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['touch', '/p'] } }, 'cancel'];

  it('chooses the approval decision among the ones Codex offered', () => {
    expect(decisionFor({ outcome: 'selected', optionId: 'allow' }, offered)).to.equal('accept');
    expect(decisionFor({ outcome: 'selected', optionId: 'allow_always' }, offered)).to.deep.equal(offered[1]);
    // Refusing one call is decline even when not offered: cancel would abort the whole turn.
    expect(decisionFor({ outcome: 'selected', optionId: 'reject' }, offered)).to.equal('decline');
    expect(decisionFor({ outcome: 'cancelled' }, offered)).to.equal('cancel');
    expect(decisionFor({ outcome: 'selected', optionId: 'reject' }, ['accept', 'decline', 'cancel'])).to.equal('decline');
    expect(decisionFor({ outcome: 'selected', optionId: 'allow_always' }, ['accept', 'acceptForSession'])).to.equal('acceptForSession');
  });

  it('shows commands and errors as people read them', () => {
    expect(commandTitle("/bin/bash -lc 'touch /p/new.txt'")).to.equal('`touch /p/new.txt`');
    expect(errorMessageOf('{"error":{"message":"fake OpenAI server: ERROR400 requested","type":"invalid_request_error"}}')).to.equal('fake OpenAI server: ERROR400 requested');
    expect(errorMessageOf('plain text')).to.equal('plain text');
  });

  it('keeps terminal colour codes out of crash reports', () => {
    const ring = new StderrRing();
    ring.push(Buffer.from('\u001b[2m2026-11-30\u001b[0m \u001b[31mERROR\u001b[0m failed\n'));
    expect(ring.tail()).to.equal('2026-11-30 ERROR failed');
  });
});
