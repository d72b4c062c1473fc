import { expect } from 'chai';
import { defaultLoadLimit, placeSession } from '../../src/cluster/placement.js';

describe('cluster/placement: placeSession', () => {
  const cases: ReadonlyArray<{ name: string; load: number; live: { hostId: string; load: number }[]; limit?: number; expected: ReturnType<typeof placeSession> }> = [
    { name: 'below the limit: local, even when others are idle', load: 3, live: [{ hostId: 'b', load: 0 }], expected: { where: 'local' } },
    { name: 'one below the default limit: local', load: defaultLoadLimit - 1, live: [{ hostId: 'b', load: 0 }], expected: { where: 'local' } },
    { name: 'at the default limit: the least-loaded live host', load: defaultLoadLimit, live: [{ hostId: 'b', load: 9 }, { hostId: 'c', load: 4 }], expected: { where: 'remote', hostId: 'c' } },
    { name: 'ties on load: the smallest host id', load: 60, live: [{ hostId: 'd', load: 4 }, { hostId: 'c', load: 4 }, { hostId: 'e', load: 4 }], expected: { where: 'remote', hostId: 'c' } },
    { name: 'no live host: local', load: 80, live: [], expected: { where: 'local' } },
    { name: 'only itself in the list: local', load: 80, live: [{ hostId: 'a', load: 80 }], expected: { where: 'local' } },
    { name: 'itself is skipped even when it is the least loaded', load: 50, live: [{ hostId: 'a', load: 0 }, { hostId: 'b', load: 7 }], expected: { where: 'remote', hostId: 'b' } },
    { name: 'over the limit, other hosts busier: local (this host is the least loaded)', load: 50, live: [{ hostId: 'b', load: 51 }, { hostId: 'c', load: 52 }], expected: { where: 'local' } },
    { name: 'over the limit, another host as busy: local (no hop for nothing)', load: 50, live: [{ hostId: 'b', load: 50 }], expected: { where: 'local' } },
    { name: 'over the limit, one host busier and one less busy: the less busy', load: 50, live: [{ hostId: 'b', load: 70 }, { hostId: 'c', load: 49 }], expected: { where: 'remote', hostId: 'c' } },
    { name: 'a limit of 0, both idle: local (no host is less loaded)', load: 0, live: [{ hostId: 'b', load: 0 }], limit: 0, expected: { where: 'local' } },
    { name: 'a limit of 0 and a host less loaded: there', load: 1, live: [{ hostId: 'b', load: 0 }], limit: 0, expected: { where: 'remote', hostId: 'b' } },
    { name: 'a custom limit', load: 2, live: [{ hostId: 'b', load: 1 }], limit: 2, expected: { where: 'remote', hostId: 'b' } },
  ];
  for (const { name, load, live, limit, expected } of cases) {
    it(name, () => {
      expect(placeSession('a', load, live, limit)).to.deep.equal(expected);
    });
  }
});
