/**
 * Where a new session runs (docs/cluster.md, "Placement"): a pure function of this host's load
 * and the live hosts' loads, so the policy is tested as a matrix and documented in one place.
 */

/** A live host as placement sees it. */
export interface PlacementCandidate {
  readonly hostId: string;
  /** Sessions live there (written with its heartbeat). */
  readonly load: number;
}

/** What {@link placeSession} decides. */
export type Placement = { readonly where: 'local' } | { readonly where: 'remote'; readonly hostId: string };

/** The default load limit: sessions a host runs before it places new ones elsewhere. */
export const defaultLoadLimit = 50;

/**
 * The documented policy: local if `localLoad < loadLimit`; else the live other host with the
 * lowest load (ties: the smallest `hostId`, so every host decides the same), even if it is
 * as busy (docs/cluster-plan.md as written); with no other live host, local (a session refused
 * is worse than a busy host).
 *
 * @param localHostId this host, left out of `live` if it is there
 */
export function placeSession(localHostId: string, localLoad: number, live: readonly PlacementCandidate[], loadLimit = defaultLoadLimit): Placement {
  if (localLoad < loadLimit) return { where: 'local' };
  let best: PlacementCandidate | undefined;
  for (const host of live) {
    if (host.hostId === localHostId) continue;
    if (!best || host.load < best.load || (host.load === best.load && host.hostId < best.hostId)) best = host;
  }
  return best ? { where: 'remote', hostId: best.hostId } : { where: 'local' };
}
