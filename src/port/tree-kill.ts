/**
 * Signals to a whole process tree: the CLI's process group, and every descendant warden has
 * seen, in whatever session or group it runs. A `setsid` child (Claude Code's Bash commands)
 * survives a group kill and, once the CLI is dead, is a child of init that no walk from the
 * CLI finds: so the tree is read before each kill warden decides (and at each memory poll),
 * its members are remembered, and the kill reaches the remembered ones still running as the
 * same process (pid and start time), their own groups and children too.
 */
import { signalGroup } from './process-group.js';
import { groupOf, procAvailable, startTimeOf, stillRuns, walkTree, type TreeMember } from './process-tree.js';

/** The processes of one port's tree seen so far (by pid), kept beside the port. */
export class KnownTree {
  readonly #root: number;
  /** The root as spawned: once it is gone (its pid free for reuse), the walk no longer starts there. */
  readonly #rootMember: TreeMember | undefined;
  readonly #members = new Map<number, TreeMember>();

  constructor(root: number) {
    this.#root = root;
    const startTime = procAvailable ? startTimeOf(root) : undefined;
    this.#rootMember = startTime === undefined ? undefined : { pid: root, startTime };
  }

  /** Reads the tree from the root and from every remembered member still running (a reparented one keeps its own children); returns the live members. */
  refresh(): TreeMember[] {
    if (!procAvailable) return [];
    const live = new Map<number, TreeMember>();
    if (this.#rootMember && stillRuns(this.#rootMember)) for (const member of walkTree(this.#root)) live.set(member.pid, member);
    for (const known of this.#members.values()) {
      if (live.has(known.pid) || !stillRuns(known)) continue;
      for (const member of walkTree(known.pid)) if (!live.has(member.pid)) live.set(member.pid, member);
    }
    // The gone are forgotten: their pids may be reused by processes that are not ours.
    this.#members.clear();
    for (const [pid, member] of live) this.#members.set(pid, member);
    return [...live.values()];
  }

  /** The members remembered (as of the last refresh). */
  get size(): number {
    return this.#members.size;
  }

  /**
   * Sends `signal` to the root's group and to every member of the tree (read again first):
   * each one, and the group of each that leads its own. `false` when nothing was left.
   */
  signal(signal: NodeJS.Signals): boolean {
    const members = this.refresh();
    let reached = signalGroup(this.#root, signal);
    for (const member of members) {
      if (member.pid === this.#root) continue;
      // A group leader of its own (a setsid'd shell): its group holds what it started.
      if (leadsGroup(member.pid)) reached = signalGroup(member.pid, signal) || reached;
      reached = signalProcess(member.pid, signal) || reached;
    }
    return reached;
  }
}

function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

function leadsGroup(pid: number): boolean {
  return groupOf(pid) === pid;
}

/**
 * Trees of the ports of this process that are still alive, killed with SIGKILL when the host
 * exits without stopping them (an exception, `process.exit()`), as their groups are
 * (process-group.ts): the walk is synchronous, so it runs in the exit handler. Tracked before
 * the group, so that this handler runs first and still finds the CLI to walk from.
 */
const liveTrees = new Set<KnownTree>();
let exitHookInstalled = false;

/** Records a live port's tree so that the host's exit kills it. */
export function trackTree(tree: KnownTree): void {
  liveTrees.add(tree);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const live of liveTrees) live.signal('SIGKILL');
    });
  }
}

/** Forgets a tree whose port ended. */
export function untrackTree(tree: KnownTree): void {
  liveTrees.delete(tree);
}
