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

/**
 * The `_meta` key a host marks a `session/new` with when it places the session on another host:
 * that host makes it itself, whatever its own load (a placed session is never placed again).
 */
export const PLACED_META_KEY = 'acp-warden/placed';

/** This host as placement sees it: its id in the cluster and its load (the sessions it owns, as its heartbeat reports). */
export interface PlacementSelf {
  readonly hostId: string;
  readonly load: number;
}

/** Where a new session is made: here, or on a live host the client's `session/new` is forwarded to. */
export type PlacementTarget = { readonly where: 'local' } | { readonly where: 'remote'; readonly hostId: string; readonly url: string };

/** The default load limit: sessions a host runs before it places new ones elsewhere. */
export const defaultLoadLimit = 50;

/**
 * The documented policy: local if `localLoad < loadLimit`; else the least-loaded live host,
 * this one included: another host only when its load is lower than this host's (the lowest;
 * ties: the smallest `hostId`, so every host decides the same), local when none is (a session
 * sent to a host as busy costs a hop for nothing); with no other live host, local (a session
 * refused is worse than a busy host).
 *
 * @param localHostId this host, left out of `live` if it is there
 */
export function placeSession(localHostId: string, localLoad: number, live: readonly PlacementCandidate[], loadLimit = defaultLoadLimit): Placement {
  if (localLoad < loadLimit) return { where: 'local' };
  let best: PlacementCandidate | undefined;
  for (const host of live) {
    if (host.hostId === localHostId || host.load >= localLoad) continue;
    if (!best || host.load < best.load || (host.load === best.load && host.hostId < best.hostId)) best = host;
  }
  return best ? { where: 'remote', hostId: best.hostId } : { where: 'local' };
}
