/** Roles of the connections attached to a session (session-roles.ts), as a behaviour matrix. */
import { expect } from 'chai';
import { attach, attached, detach, roleOf, takeControl, unattended } from '../../src/serve/session-roles.js';
import { denied } from '../../src/serve/unattended-policy.js';

describe('session roles', () => {
  const abc = () => attach(attach(attach(unattended, 'a').roles, 'b').roles, 'c').roles;

  it('attach: the first is the controller, later ones observe in the order they came; attaching again keeps the role', () => {
    expect(attach(unattended, 'a')).to.deep.equal({ roles: { controller: 'a', observers: [] }, role: 'controller' });
    expect(abc()).to.deep.equal({ controller: 'a', observers: ['b', 'c'] });
    expect(attach(abc(), 'b')).to.deep.equal({ roles: abc(), role: 'observer' });
    expect(attached(abc())).to.deep.equal(['a', 'b', 'c']);
  });

  it('detach of the controller: control passes to the observer attached longest; of an observer: nothing passes', () => {
    expect(detach(abc(), 'a')).to.deep.equal({ roles: { controller: 'b', observers: ['c'] }, handedOver: true });
    expect(detach(abc(), 'c')).to.deep.equal({ roles: { controller: 'a', observers: ['b'] }, handedOver: false });
    expect(detach({ controller: 'a', observers: [] }, 'a')).to.deep.equal({ roles: unattended, handedOver: true });
    expect(detach(abc(), 'z').roles).to.deep.equal(abc());
  });

  it('take control: an observer becomes the controller and the controller observes; not attached: refused', () => {
    expect(takeControl(abc(), 'c')).to.deep.equal({ controller: 'c', observers: ['b', 'a'] });
    expect(takeControl(abc(), 'a')).to.deep.equal(abc());
    expect(takeControl(abc(), 'z')).to.equal(undefined);
    expect(roleOf(abc(), 'b')).to.equal('observer');
    expect(roleOf(abc(), 'z')).to.equal(undefined);
  });
});

describe('unattended policy: the denied answer', () => {
  const option = (optionId: string, kind: string) => ({ optionId, kind, name: optionId });

  it('picks reject_once, else reject_always, else cancels', () => {
    expect(denied({ options: [option('y', 'allow_once'), option('n', 'reject_always'), option('no', 'reject_once')] })).to.deep.equal({ outcome: { outcome: 'selected', optionId: 'no' } });
    expect(denied({ options: [option('y', 'allow_once'), option('n', 'reject_always')] })).to.deep.equal({ outcome: { outcome: 'selected', optionId: 'n' } });
    expect(denied({ options: [option('y', 'allow_once')] })).to.deep.equal({ outcome: { outcome: 'cancelled' } });
    expect(denied(undefined)).to.deep.equal({ outcome: { outcome: 'cancelled' } });
  });
});
