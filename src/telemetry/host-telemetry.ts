/**
 * What a host needs of telemetry (`createHost({ telemetry })`), in a file of its own that
 * loads nothing: the host imports this type only, so a host without telemetry loads no
 * OpenTelemetry module.
 */
import type { HostEvent } from '../host/host-event.js';
import type { HostStore } from '../journal/host-journal.js';
import type { Transport } from '../jsonrpc/transport.js';
import type { EditorTapOptions } from './editor-tap.js';

/**
 * Telemetry as a host uses it: every connection it serves observed (the program's own, an
 * editor's, each client of its hub), its journal's writes timed, its events heard. Made by
 * `startTelemetry` (`acp-warden/telemetry`); give it to one host.
 */
export interface HostTelemetry {
  /** `transport` observed: turns, tool calls, permission waits read off it (`peer`: who is on the other end). */
  tapEditor(transport: Transport, options?: EditorTapOptions): Transport;
  /** `journal`, its `append` and `commit` timed. */
  timeJournal<J extends HostStore>(journal: J): J;
  /** For `host.on`: sessions opened, closed, failed; agent restarts and recoveries. */
  readonly hostListener: (event: HostEvent) => void;
}
