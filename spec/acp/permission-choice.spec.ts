/**
 * The permission policy of `warden demo` and `warden chaos` (allowOnce): this call only,
 * by kind, whatever the agent's order.
 */
import { expect } from 'chai';
import { allowOnce } from '../../src/acp/permission-choice.js';
import { permissionOptions } from '../../src/adapters/session-outcomes.js';

describe('allowOnce', () => {
  it('Claude\'s and Codex\'s options (allow_always first, then allow_once): the allow_once option', () => {
    expect(allowOnce(permissionOptions('Always allow'))).to.deep.equal({ outcome: 'selected', optionId: 'allow' });
  });

  it('no allow_once offered (allow_always first): cancelled, never the first option', () => {
    expect(allowOnce([{ optionId: 'always', kind: 'allow_always' }, { optionId: 'no', kind: 'reject_once' }])).to.deep.equal({ outcome: 'cancelled' });
    expect(allowOnce([])).to.deep.equal({ outcome: 'cancelled' });
  });
});
