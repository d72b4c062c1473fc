/**
 * A model of a static supervision tree under OTP's rules, for model-based tests: what
 * `supervisionTree()` should show after each step.
 *
 * It is written from OTP's `supervisor` semantics (see SUPERVISION-NOTES.md §1.1) and
 * deliberately shares no code with `src/supervision`: restart decisions, strategy groups
 * and the intensity window are re-implemented here.
 *
 * - A child that exits is restarted when its restart type says so: `permanent` always,
 *   `transient` only after an abnormal exit (anything but `normal`, `shutdown`,
 *   `{shutdown, _}`), `temporary` never. A child not restarted keeps its spec (status
 *   `terminated`), except a `temporary` one, which is removed.
 * - A restart at time `t` counts the restarts of the window `[t - period, t]` plus itself;
 *   when that exceeds `intensity` the supervisor stops its children (reverse start order)
 *   and exits with `{ kind: 'shutdown', detail: 'reached_max_restart_intensity' }`.
 *   One group restart counts once.
 * - `one_for_one` restarts the child; `one_for_all` stops the others (reverse order) and
 *   starts them all again in order; `rest_for_one` does so with the child and the ones
 *   after it. A `temporary` bystander is removed, not restarted. Children of the group that
 *   were not running (a transient child kept after a normal exit) start again too, as in
 *   OTP's `restart_multiple_children` (`terminate_children` then `start_children`).
 * - A supervisor that stops (given up, asked, or stopped by its parent) removes its
 *   `temporary` children; a nested supervisor's exit is seen by its parent as a child exit
 *   with the supervisor's exit reason (escalation).
 */

export type Strategy = 'one_for_one' | 'one_for_all' | 'rest_for_one';
export type Restart = 'permanent' | 'transient' | 'temporary';
export type WorkerShutdown = 'brutal_kill' | 'infinity' | number;

export interface WorkerShape {
  readonly kind: 'worker';
  readonly id: string;
  readonly restart: Restart;
  /** `undefined`: the default (5000 ms). */
  readonly shutdown: WorkerShutdown | undefined;
}

export interface Flags {
  readonly strategy: Strategy;
  readonly intensity: number;
  readonly period: number;
}

export interface SupervisorShape extends Flags {
  readonly kind: 'supervisor';
  readonly id: string;
  readonly restart: Restart;
  readonly children: readonly ChildShape[];
}

export type ChildShape = WorkerShape | SupervisorShape;

export interface RootShape extends Flags {
  readonly children: readonly ChildShape[];
}

/** Exit reasons as the tree shows them (`lastExit`), without error payloads. */
export type ModelExit =
  | { readonly kind: 'normal' }
  | { readonly kind: 'shutdown'; readonly detail?: string }
  | { readonly kind: 'error' }
  | { readonly kind: 'killed' };

export const intensityExit: ModelExit = { kind: 'shutdown', detail: 'reached_max_restart_intensity' };

/** A node of the expected tree; the same shape the spec derives from `supervisionTree()`. */
export interface ExpectedNode {
  readonly id: string;
  readonly status: 'running' | 'terminated';
  readonly running: boolean;
  readonly restarts: number;
  readonly lastExit: ModelExit | undefined;
  readonly children?: readonly ExpectedNode[];
}

/** OTP: `normal`, `shutdown` and `{shutdown, _}` are normal exits; anything else is abnormal. */
function isNormal(reason: ModelExit): boolean {
  return reason.kind === 'normal' || reason.kind === 'shutdown';
}

function restartsAfter(restart: Restart, reason: ModelExit): boolean {
  if (restart === 'permanent') return true;
  if (restart === 'transient') return !isNormal(reason);
  return false;
}

interface ModelChild {
  readonly shape: ChildShape;
  status: 'running' | 'terminated';
  restarts: number;
  lastExit: ModelExit | undefined;
  /** The running incarnation of a nested supervisor. */
  sup: ModelSupervisor | undefined;
}

export class ModelSupervisor {
  readonly children = new Map<string, ModelChild>();
  phase: 'running' | 'stopped' = 'running';
  exit: ModelExit | undefined;
  totalRestarts = 0;
  /** Times of the restarts done (allowed ones). */
  private readonly restartTimes: number[] = [];

  constructor(
    readonly path: string,
    readonly flags: Flags,
    childShapes: readonly ChildShape[],
    private readonly now: () => number,
    /** Called when this supervisor exits on its own (not when its parent stops it). */
    private readonly onExit: ((reason: ModelExit) => void) | undefined,
  ) {
    for (const shape of childShapes) {
      const child: ModelChild = { shape, status: 'terminated', restarts: 0, lastExit: undefined, sup: undefined };
      this.children.set(shape.id, child);
      this.start(child);
    }
  }

  private start(child: ModelChild): void {
    child.status = 'running';
    const shape = child.shape;
    if (shape.kind === 'supervisor') {
      let incarnation: ModelSupervisor | undefined = undefined;
      const onExit = (reason: ModelExit): void => {
        if (child.sup === incarnation) this.childExited(shape.id, reason);
      };
      incarnation = new ModelSupervisor(`${this.path}/${shape.id}`, shape, shape.children, this.now, onExit);
      child.sup = incarnation;
    }
  }

  /** The supervisor stops a running child: workers at once, a nested supervisor gracefully. */
  private terminate(child: ModelChild): void {
    if (child.status !== 'running') return;
    const shape = child.shape;
    if (shape.kind === 'worker') {
      // The test worker does not handle the shutdown event, so it is stopped at once; the
      // reason is `killed` only for `brutal_kill` (OTP: exit(Pid, kill)).
      child.lastExit = shape.shutdown === 'brutal_kill' ? { kind: 'killed' } : { kind: 'shutdown' };
    } else {
      child.sup?.stopChildren({ kind: 'shutdown' });
      child.lastExit = { kind: 'shutdown' };
    }
    child.status = 'terminated';
    child.sup = undefined;
  }

  /** Stops every running child in reverse start order, removes temporary ones, exits. */
  private stopChildren(reason: ModelExit): void {
    for (const child of [...this.children.values()].reverse()) this.terminate(child);
    for (const [id, child] of this.children) {
      if (child.shape.restart === 'temporary') this.children.delete(id);
    }
    this.phase = 'stopped';
    this.exit = reason;
  }

  /** This supervisor exits on its own (intensity, or asked by someone other than its parent). */
  exitWith(reason: ModelExit): void {
    if (this.phase !== 'running') throw new Error(`model: ${this.path} is not running`);
    this.stopChildren(reason);
    this.onExit?.(reason);
  }

  /** A running child exited on its own with `reason`. */
  childExited(id: string, reason: ModelExit): void {
    if (this.phase !== 'running') throw new Error(`model: ${this.path} is not running`);
    const child = this.children.get(id);
    if (!child || child.status !== 'running') throw new Error(`model: ${this.path}/${id} is not running`);
    child.status = 'terminated';
    child.sup = undefined;
    child.lastExit = reason;
    if (!restartsAfter(child.shape.restart, reason)) {
      if (child.shape.restart === 'temporary') this.children.delete(id);
      return;
    }
    const t = this.now();
    const counted = this.restartTimes.filter((time) => time >= t - this.flags.period).length + 1;
    if (counted > this.flags.intensity) {
      this.exitWith(intensityExit);
      return;
    }
    this.restartTimes.push(t);
    this.totalRestarts += 1;
    const order = [...this.children.keys()];
    const group =
      this.flags.strategy === 'one_for_one' ? [id]
      : this.flags.strategy === 'one_for_all' ? order
      : order.slice(order.indexOf(id));
    for (const other of [...group].reverse()) {
      if (other !== id) this.terminate(this.children.get(other) as ModelChild);
    }
    for (const member of group) {
      const entry = this.children.get(member) as ModelChild;
      if (member !== id && entry.shape.restart === 'temporary') {
        this.children.delete(member);
        continue;
      }
      entry.restarts += 1;
      this.start(entry);
    }
  }

  expected(): ExpectedNode[] {
    return [...this.children.values()].map((child) => ({
      id: child.shape.id,
      status: child.status,
      running: child.status === 'running',
      restarts: child.restarts,
      lastExit: child.lastExit,
      ...(child.sup ? { children: child.sup.expected() } : {}),
    }));
  }
}

/** A path from the root to a child: the ids of the nested supervisors, then the child id. */
export type ChildPath = readonly string[];

/** The whole tree with a clock of its own, advanced by the test as it advances the real one. */
export class ModelSystem {
  now = 0;
  readonly root: ModelSupervisor;

  constructor(readonly rootId: string, readonly shape: RootShape) {
    this.root = new ModelSupervisor(rootId, shape, shape.children, () => this.now, undefined);
  }

  get running(): boolean {
    return this.root.phase === 'running';
  }

  advance(ms: number): void {
    this.now += ms;
  }

  /** Running workers anywhere in the tree, depth first in start order. */
  liveWorkers(): ChildPath[] {
    return this.collect((child) => child.shape.kind === 'worker');
  }

  /** Running nested supervisors anywhere in the tree. */
  liveSupervisors(): ChildPath[] {
    return this.collect((child) => child.shape.kind === 'supervisor');
  }

  /** Every running child (workers and nested supervisors): what must be `active`. */
  liveCount(): number {
    return this.collect(() => true).length;
  }

  private collect(keep: (child: ModelChild) => boolean): ChildPath[] {
    const out: ChildPath[] = [];
    const walk = (sup: ModelSupervisor, prefix: readonly string[]): void => {
      if (sup.phase !== 'running') return;
      for (const [id, child] of sup.children) {
        if (child.status !== 'running') continue;
        if (keep(child)) out.push([...prefix, id]);
        if (child.sup) walk(child.sup, [...prefix, id]);
      }
    };
    walk(this.root, []);
    return out;
  }

  private parentOf(path: ChildPath): ModelSupervisor {
    let sup = this.root;
    for (const id of path.slice(0, -1)) {
      const next = sup.children.get(id)?.sup;
      if (!next) throw new Error(`model: no running supervisor at ${path.join('/')}`);
      sup = next;
    }
    return sup;
  }

  /** A worker crashes (abnormal exit). */
  crash(path: ChildPath): void {
    this.parentOf(path).childExited(path[path.length - 1] as string, { kind: 'error' });
  }

  /** A worker finishes (normal exit). */
  finish(path: ChildPath): void {
    this.parentOf(path).childExited(path[path.length - 1] as string, { kind: 'normal' });
  }

  /** A worker ends with `reason` as its output. */
  exitWorker(path: ChildPath, reason: ModelExit): void {
    this.parentOf(path).childExited(path[path.length - 1] as string, reason);
  }

  /** A nested supervisor is told to shut down with `reason`; its parent sees it exit. */
  stopNested(path: ChildPath, reason: ModelExit): void {
    const sup = this.parentOf(path).children.get(path[path.length - 1] as string)?.sup;
    if (!sup) throw new Error(`model: no running supervisor at ${path.join('/')}`);
    sup.exitWith(reason);
  }

  /** Graceful shutdown of the root. */
  shutdownRoot(): void {
    this.root.exitWith({ kind: 'shutdown' });
  }

  expectedChildren(): ExpectedNode[] {
    return this.root.expected();
  }

  /** Intensity and period of every supervisor path, for the event-stream invariant. */
  flagsByPath(): Map<string, Flags> {
    const out = new Map<string, Flags>();
    const walk = (path: string, flags: Flags, children: readonly ChildShape[]): void => {
      out.set(path, flags);
      for (const child of children) {
        if (child.kind === 'supervisor') walk(`${path}/${child.id}`, child, child.children);
      }
    };
    walk(this.rootId, this.shape, this.shape.children);
    return out;
  }
}
