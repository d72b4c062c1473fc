import type { AnyActorRef } from 'xstate';
import type { ChildType, RestartType } from './child-spec.js';
import { serializeExit } from './exit-reason.js';
import { pidOf } from './child-start.js';
import { supervisorState, type ChildStatus, type SupervisorPhase } from './supervisor-state.js';

/** One row of {@link whichChildren} (OTP's `which_children/1`). */
export interface ChildInfo {
  readonly id: string;
  /** The running actor, or `undefined` when the child is restarting or terminated. */
  readonly ref: AnyActorRef | undefined;
  readonly status: ChildStatus;
  readonly type: ChildType;
  readonly restart: RestartType;
  readonly restarts: number;
}

/** Counts of {@link countChildren} (OTP's `count_children/1`). */
export interface ChildCounts {
  /** Child specs held, running or not. */
  readonly specs: number;
  /** Children with a running actor. */
  readonly active: number;
  /** Children of type `supervisor`. */
  readonly supervisors: number;
  /** Children of type `worker`. */
  readonly workers: number;
}

function stateOf(supervisor: AnyActorRef) {
  const state = supervisorState(supervisor);
  if (!state) {
    throw new TypeError(`Expected a supervisor actor, got actor "${supervisor.id}". Create it from createSupervisor() or createDynamicSupervisor().`);
  }
  return state;
}

/** The supervisor's children in start order. */
export function whichChildren(supervisor: AnyActorRef): ChildInfo[] {
  const rows: ChildInfo[] = [];
  for (const [id, entry] of stateOf(supervisor).children) {
    rows.push({
      id,
      ref: entry.ref,
      status: entry.status,
      type: entry.spec.type,
      restart: entry.spec.restart,
      restarts: entry.restarts,
    });
  }
  return rows;
}

/** How many children, running, supervisors and workers. */
export function countChildren(supervisor: AnyActorRef): ChildCounts {
  let active = 0;
  let supervisors = 0;
  const children = stateOf(supervisor).children;
  for (const entry of children.values()) {
    if (entry.ref) active++;
    if (entry.spec.type === 'supervisor') supervisors++;
  }
  return { specs: children.size, active, supervisors, workers: children.size - supervisors };
}

/** A node of the serialisable supervision tree. */
export interface SupervisionTreeNode {
  /** The child id (the actor id for the root). */
  readonly id: string;
  /** The logic's name: machine id, supervisor name, or function name. */
  readonly name: string;
  readonly type: ChildType;
  /** `running`, `restarting`, `terminating`, `terminated` for children; the phase for supervisors. */
  readonly status: ChildStatus | SupervisorPhase;
  /** Restarts of this child (for the root: restarts done by it). */
  readonly restarts: number;
  /** The OS pid where the child is a port. */
  readonly pid?: number;
  /** The XState session id of the running actor, as the inspector shows it. */
  readonly sessionId?: string;
  readonly strategy?: string;
  /** The last exit, with errors as `{ name, message, stack }`. */
  readonly lastExit?: Record<string, unknown>;
  readonly children?: readonly SupervisionTreeNode[];
}

/**
 * A plain, JSON-serialisable snapshot of the whole hierarchy under `supervisor`: ids, logic
 * names, status, restart counts, pids. Nested supervisors are walked recursively.
 */
export function supervisionTree(supervisor: AnyActorRef): SupervisionTreeNode {
  const state = stateOf(supervisor);
  return {
    id: supervisor.id,
    name: state.config.name,
    type: 'supervisor',
    status: state.phase,
    restarts: state.totalRestarts,
    sessionId: supervisor.sessionId,
    strategy: state.config.dynamic ? 'dynamic' : state.config.flags.strategy,
    children: childNodes(supervisor),
  };
}

function childNodes(supervisor: AnyActorRef): SupervisionTreeNode[] {
  const nodes: SupervisionTreeNode[] = [];
  for (const [id, entry] of stateOf(supervisor).children) {
    const ref = entry.ref;
    const nested = ref ? supervisorState(ref) : undefined;
    const pid = ref ? pidOf(ref) : undefined;
    nodes.push({
      id,
      name: entry.spec.name,
      type: entry.spec.type,
      status: entry.status,
      restarts: entry.restarts,
      ...(pid === undefined ? {} : { pid }),
      ...(ref ? { sessionId: ref.sessionId } : {}),
      ...(nested ? { strategy: nested.config.dynamic ? 'dynamic' : nested.config.flags.strategy } : {}),
      ...(entry.lastExit ? { lastExit: serializeExit(entry.lastExit) } : {}),
      ...(nested && ref ? { children: childNodes(ref) } : {}),
    });
  }
  return nodes;
}
