/**
 * A session adapter bound to its own port: the port's lines reach the session straight from
 * the port (its emitted events become the session's `native.*` and `port.exited` events),
 * and what the session writes goes straight to the port, with no switchboard between them.
 *
 * The port is the session's sibling under its rest_for_one supervisor; the adapter agent
 * hands its ref over in `port.started` at each (re)start, and the session binds to the new
 * one (the old port's subscriptions are dropped). The live refs and subscriptions are kept
 * here, in a WeakMap beside the session actor, never in its snapshot.
 */
import type { AnyActorRef, Subscription } from 'xstate';
import type { PortEmitted } from '../port/port.js';
import type { SessionAdapterEvent, SessionAdapterOutput } from './adapter.js';

interface Link {
  readonly port: AnyActorRef;
  readonly subscriptions: readonly Subscription[];
}

const links = new WeakMap<AnyActorRef, Link>();

/** The port `session` is bound to, if any. */
export function boundPort(session: AnyActorRef): AnyActorRef | undefined {
  return links.get(session)?.port;
}

/** Binds `session` to `port`: from now on, the port's lines go to the session, in the order the port emits them. */
export function bindPort(session: AnyActorRef, port: AnyActorRef): void {
  if (links.get(session)?.port === port) return;
  unbindPort(session);
  const deliver = (event: SessionAdapterEvent) => {
    if (session.getSnapshot().status === 'active') session.send(event);
  };
  links.set(session, { port, subscriptions: relayPortLines(port, deliver) });
}

/**
 * Subscribes `deliver` to `port`'s lines and exit, as the session events they are
 * (`native.message`, `native.nonJson`, `native.oversize`, `port.exited`), in the order the
 * port emits them.
 */
export function relayPortLines(port: AnyActorRef, deliver: (event: SessionAdapterEvent) => void): Subscription[] {
  return [
    // A JSON line that is not an object (null, 42, []) is no protocol message of any CLI: noise.
    port.on('port.message', (event: Extract<PortEmitted, { type: 'port.message' }>) =>
      deliver(typeof event.message === 'object' && event.message !== null && !Array.isArray(event.message)
        ? { type: 'native.message', message: event.message }
        : { type: 'native.nonJson', preview: JSON.stringify(event.message).slice(0, 200) })),
    port.on('port.nonJson', (event: Extract<PortEmitted, { type: 'port.nonJson' }>) => deliver({ type: 'native.nonJson', preview: event.preview })),
    port.on('port.oversize', (event: Extract<PortEmitted, { type: 'port.oversize' }>) => deliver({ type: 'native.oversize', bytes: event.bytesSeen, limit: event.limit, head: event.head })),
    port.on('port.exited', (event: Extract<PortEmitted, { type: 'port.exited' }>) => deliver({ type: 'port.exited', exit: event.exit })),
  ];
}

/** Drops `session`'s binding (its port ended, or it stops). */
export function unbindPort(session: AnyActorRef): void {
  const link = links.get(session);
  if (!link) return;
  links.delete(session);
  for (const subscription of link.subscriptions) subscription.unsubscribe();
}

/** Sends a session's `port.write` or `port.busy` to its own port, when it has one that runs. */
export function toOwnPort(session: AnyActorRef, output: Extract<SessionAdapterOutput, { type: 'port.write' | 'port.busy' }>): void {
  const port = boundPort(session);
  if (!port || port.getSnapshot().status !== 'active') return;
  port.send(output.type === 'port.write' ? { type: 'port.write', message: output.message } : { type: 'port.busy', busy: output.busy, toolRunning: output.toolRunning === true, ...(output.turnOpen === undefined ? {} : { turnOpen: output.turnOpen }) });
}
