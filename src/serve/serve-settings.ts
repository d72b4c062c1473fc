/**
 * How `warden serve` treats sessions whose clients are gone: how long an agent with no
 * connection lives on, what a permission request does with no controller to answer it, and
 * how long a SIGTERM lets turns finish, and (a cluster) how many sessions it runs before it places new
 * ones on other hosts. Decided once from the command line and handed to
 * whatever attaches connections.
 */

import { defaultDrainTimeoutMs } from '../acp/drain-timeout.js';
import { defaultLoadLimit } from '../cluster/placement.js';
import { defaultIdleTimeoutMs } from './connection-hub.js';
import { defaultUnattendedPolicy, type UnattendedPolicy } from './unattended-policy.js';

/** The daemon's policies, in ms. */
export interface ServeSettings {
  /** A session's agent process is stopped after this long without any connection (`--idle-timeout`; 0: never). */
  readonly idleTimeoutMs: number;
  /**
   * A permission request with no controller attached (`--unattended`, `--unattended-timeout`):
   * `wait` for a controller to attach, at most `timeoutMs`, or `deny` at once; handed to the hub as is.
   */
  readonly unattended: UnattendedPolicy;
  /** On SIGTERM, how long running turns may go on before agents are stopped (`--drain-timeout`). */
  readonly drainTimeoutMs: number;
  /** On a PostgreSQL store: the sessions this host owns before it places new ones on the least-loaded live host (`--load-limit`; docs/cluster.md, "Placement"). */
  readonly loadLimit: number;
  /** Sessions kept live on their agents before the least recently used free ones are hibernated (`--max-live-agents`; 0: no cap). */
  readonly maxLiveSessions: number;
}

/**
 * The defaults: agents live 30 min without a connection; permissions wait 10 min; a SIGTERM
 * drains 30 s. Each is declared once where it is used (the hub, the unattended policy, the
 * agent server's drain, placement), and named here for the command line.
 */
export const defaultServeSettings: ServeSettings = {
  idleTimeoutMs: defaultIdleTimeoutMs,
  unattended: defaultUnattendedPolicy,
  drainTimeoutMs: defaultDrainTimeoutMs,
  loadLimit: defaultLoadLimit,
  maxLiveSessions: 0,
};
