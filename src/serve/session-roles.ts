/**
 * Who may act on a session served to several connections: one controller (may prompt, cancel,
 * answer the agent's requests, change mode and config, close) and any number of observers
 * (receive everything, act on nothing). Pure decisions over a session's attachments; the hub
 * carries them out.
 *
 * - The first connection to attach (the one that made the session, or the first to load or
 *   resume it) is its controller; later ones observe.
 * - When the controller leaves, control passes to the observer attached longest.
 * - An attached observer takes control by asking (`_acp-warden/take_control`): the controller
 *   it replaces goes on as an observer.
 */

/** A session's connections, by id: its controller (if any is attached) and its observers, oldest first. */
export interface SessionRoles {
  readonly controller: string | undefined;
  readonly observers: readonly string[];
}

/** What a connection is to a session. */
export type Role = 'controller' | 'observer';

/** No connection attached. */
export const unattended: SessionRoles = { controller: undefined, observers: [] };

/** The connection's role, if it is attached. */
export function roleOf(roles: SessionRoles, connectionId: string): Role | undefined {
  if (roles.controller === connectionId) return 'controller';
  return roles.observers.includes(connectionId) ? 'observer' : undefined;
}

/** Attaches a connection (again: it keeps its role): the controller when there is none. */
export function attach(roles: SessionRoles, connectionId: string): { readonly roles: SessionRoles; readonly role: Role } {
  const role = roleOf(roles, connectionId);
  if (role) return { roles, role };
  if (roles.controller === undefined) return { roles: { controller: connectionId, observers: roles.observers }, role: 'controller' };
  return { roles: { controller: roles.controller, observers: [...roles.observers, connectionId] }, role: 'observer' };
}

/** Detaches a connection; `controller`: who controls now, when control passed (`undefined`: nobody is attached to take it). */
export function detach(roles: SessionRoles, connectionId: string): { readonly roles: SessionRoles; readonly handedOver: boolean } {
  if (roles.controller !== connectionId) return { roles: { controller: roles.controller, observers: roles.observers.filter((id) => id !== connectionId) }, handedOver: false };
  const [next, ...rest] = roles.observers;
  return { roles: { controller: next, observers: rest }, handedOver: true };
}

/** An attached connection takes control; the controller it replaces observes. `undefined`: it is not attached. */
export function takeControl(roles: SessionRoles, connectionId: string): SessionRoles | undefined {
  const role = roleOf(roles, connectionId);
  if (!role) return undefined;
  if (role === 'controller') return roles;
  const observers = roles.observers.filter((id) => id !== connectionId);
  return { controller: connectionId, observers: roles.controller === undefined ? observers : [...observers, roles.controller] };
}

/** Every attached connection, the controller first. */
export function attached(roles: SessionRoles): readonly string[] {
  return roles.controller === undefined ? roles.observers : [roles.controller, ...roles.observers];
}
