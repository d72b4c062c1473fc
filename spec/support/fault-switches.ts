/**
 * The faults a client-side fault proxy (ws-fault-proxy.ts, http-fault-proxy.ts) is armed with,
 * each for the next message that matches (then disarmed), and what both record: one place for
 * the arming and the trace, whatever the binding.
 */

/** Which message a fault applies to. */
export type MessageMatch = (message: Record<string, unknown>) => boolean;

/** One message through a proxy. */
export interface TraceEntry {
  readonly connection: number;
  readonly direction: 'toServer' | 'toClient';
  /** What the proxy did with it. */
  readonly action: 'passed' | 'dropped' | 'duplicated' | 'held' | 'cut';
  readonly message: string;
}

/** How a test arms a proxy's faults (the same on both bindings). */
export interface FaultControls {
  /** F1: the next client message matching `match` is lost and its connection cut. */
  dropBeforeAccept(match: MessageMatch): void;
  /** F2: the next daemon message matching `match` is lost and its connection cut. */
  dropAfterAccept(match: MessageMatch): void;
  /** F3: the next client message matching `match` reaches the daemon twice. */
  duplicate(match: MessageMatch): void;
  /** F9: messages towards clients wait `ms` (in order) for the next `ms`. */
  pauseConsumer(ms: number): void;
}

/** The armed faults of one proxy. */
export interface FaultSwitches {
  readonly controls: FaultControls;
  /** Whether `fault` is armed for `message`: if so it is disarmed (one message each). */
  fires(fault: 'dropToServer' | 'dropToClient' | 'duplicateToServer', message: Record<string, unknown>): boolean;
  /** How long a message towards a client still waits (ms; 0: none). */
  pauseLeft(): number;
}

/** New switches, nothing armed. */
export function faultSwitches(): FaultSwitches {
  const armed: Partial<Record<'dropToServer' | 'dropToClient' | 'duplicateToServer', MessageMatch>> = {};
  let pausedUntil = 0;
  return {
    controls: {
      dropBeforeAccept: (match) => void (armed.dropToServer = match),
      dropAfterAccept: (match) => void (armed.dropToClient = match),
      duplicate: (match) => void (armed.duplicateToServer = match),
      pauseConsumer: (ms) => void (pausedUntil = Date.now() + ms),
    },
    fires(fault, message) {
      if (!armed[fault]?.(message)) return false;
      delete armed[fault];
      return true;
    },
    pauseLeft: () => Math.max(0, pausedUntil - Date.now()),
  };
}

/** A message's JSON as an object (`{}` for anything else): what the matches look at. */
export function parsedMessage(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
