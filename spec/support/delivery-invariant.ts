/**
 * The delivery invariant (issue 28), checked from outside: what each client connection of a
 * session received against the session's journal as the database holds it after the run.
 *
 * For each connection and the cursor it started from (`after`: 0 for `session/new` or a load
 * from 0, the last seq the client saw for a re-attach), every journaled entry after the cursor
 * that the connection is shown arrives exactly once, in seq order, as the update the journal
 * holds; nothing arrives that the journal does not hold. Written from the docs (docs/acp.md,
 * "the turn end update"; docs/serve.md, "Sessions that outlive connections"), not from the
 * code under test, so that the code cannot define its own oracle:
 *
 * - an `update` entry: its update, to every connection (`compaction_*` may be left out: the
 *   agent server drops them for clients without `session.compaction`);
 * - a `notice` entry: a `notice` update, or, for a client without `session.notices`, the agent
 *   message acp-warden renders it as (`_meta["acp-warden/notice"]`);
 * - a `prompt` entry: one `user_message_chunk` per block, except to the connection that sent
 *   it (it has its prompt);
 * - a `stop` or `error` entry: the turn end (`session_info_update` with
 *   `_meta["acp-warden/turnEnded"]`), except to the connection that sent the turn's prompt (it
 *   has the answer). That connection may still get it when another host ended the turn (a
 *   takeover's `host_lost`): optional there;
 * - any other entry (restarts, modes, attaches, ...): nothing.
 *
 * Legitimately without a seq: only warden's own notices (a host that may no longer write
 * tells its clients the session moved or its lease was lost; a forwarding host tells them the
 * owner went away). Any other update without a seq is one the journal does not hold.
 */
import type { JournalEntry } from '../../src/journal/journal.js';
import { cursorKeys, type Frame } from './serve-daemon.js';

/** One journal entry of a session, as the store holds it. */
export interface JournalRow {
  readonly seq: number;
  readonly entry: JournalEntry;
}

/** What one client connection received of one session, and where it started. */
export interface ConnectionRecord {
  /** Names the client and the connection in reports (`walker 1, connection 3 via host b`). */
  readonly client: string;
  readonly sessionId: string;
  /** The last seq the client had seen when this connection attached (0: `session/new`, or a load from 0). */
  readonly after: number;
  /** Every message the connection received, in order (other sessions' are ignored). */
  readonly frames: readonly Frame[];
  /** The text of each prompt this connection sent (its prompts are not echoed to it, nor their turns' ends). */
  readonly prompts?: readonly string[];
  /**
   * The text of each prompt this connection sent again under its idempotency key after an
   * earlier connection may have delivered it: whether the journal's prompt is this connection's
   * (the first copy was lost) or another's that the retry joined, its echo and its turn's end may
   * arrive or not, but at most once, in order.
   */
  readonly retried?: readonly string[];
  /**
   * The connection follows the session up to the check (attached on the owner, directly or
   * forwarded) and delivery had time to settle: everything journaled after `after` must have
   * arrived. Else (cut, closed, or its host lost the session) what arrived must be a prefix
   * without gaps: the client's next connection resumes from its last seq.
   */
  readonly following: boolean;
}

/** What can be wrong with a delivery. */
export type ViolationKind =
  /** A journaled update the connection must be shown never arrived. */
  | 'missing'
  /** A journaled update arrived more than once. */
  | 'duplicate'
  /** An update arrived after one with a later seq. */
  | 'out_of_order'
  /** An update at or before the cursor the connection started from arrived (the client had it). */
  | 'before_cursor'
  /** An update with a seq the session's journal does not hold. */
  | 'not_in_journal'
  /** An update with the seq of an entry that shows this connection nothing (its own prompt echoed, a fact). */
  | 'not_for_this_client'
  /** An update whose seq names an entry that shows something else. */
  | 'wrong_update'
  /** An update without a seq that is not one of warden's own notices: the journal does not hold it. */
  | 'unjournaled';

/** One breach of the invariant, with what is needed to find it in the logs. */
export interface Violation {
  readonly kind: ViolationKind;
  readonly client: string;
  readonly sessionId: string;
  readonly seq: number | undefined;
  /** The update's kind: as the journal shows it (`missing`), else as it arrived. */
  readonly update: string | undefined;
  /** Its index among the session's updates the connection received (absent: it never arrived). */
  readonly index?: number;
  readonly detail: string;
}

/** An update as the checker compares it: its kind (`notice` and `turn_end` recognised) and its text. */
interface Shown {
  readonly seq: number;
  readonly kind: string;
  readonly text: string | undefined;
  /** False: it may arrive (once, in its place) or not. */
  readonly required: boolean;
}

/** Updates the agent server leaves out for clients that did not ask for them. */
const droppable = new Set(['compaction_update', 'compaction_summary_chunk']);

const noticeMeta = 'acp-warden/notice';

/**
 * The breaches of the delivery invariant (empty: none) over `connections`, each against the
 * journal of its session in `journals` (entries in seq order; a session it lacks has an empty
 * journal).
 */
export function deliveryViolations(journals: ReadonlyMap<string, readonly JournalRow[]>, connections: readonly ConnectionRecord[]): Violation[] {
  return connections.flatMap((connection) => violationsOf(journals.get(connection.sessionId) ?? [], connection));
}

function violationsOf(journal: readonly JournalRow[], connection: ConnectionRecord): Violation[] {
  const { client, sessionId, after } = connection;
  const violations: Violation[] = [];
  const report = (kind: ViolationKind, seq: number | undefined, update: string | undefined, detail: string, index?: number) =>
    violations.push({ kind, client, sessionId, seq, update, ...(index === undefined ? {} : { index }), detail });
  const held = new Set(journal.map((row) => row.seq));
  const expected = shownTo(journal, connection.prompts ?? [], connection.retried ?? []).filter((shown) => shown.seq > after);
  const bySeq = new Map<number, Array<{ shown: Shown; arrived: boolean }>>();
  for (const shown of expected) {
    const list = bySeq.get(shown.seq) ?? [];
    list.push({ shown, arrived: false });
    bySeq.set(shown.seq, list);
  }
  let last = after;
  let highest = after;
  receivedOf(connection).forEach((got, index) => {
    if (got.seq === undefined) {
      if (got.kind !== 'notice') report('unjournaled', undefined, got.kind, `${got.kind}${got.text === undefined ? '' : ` ${JSON.stringify(got.text)}`} without a seq: the journal does not hold it`, index);
      return;
    }
    if (!held.has(got.seq)) return report('not_in_journal', got.seq, got.kind, `seq ${got.seq} is not in the session's journal`, index);
    if (got.seq <= after) return report('before_cursor', got.seq, got.kind, `the connection started after seq ${after}: the client had it`, index);
    const slots = bySeq.get(got.seq);
    if (!slots) {
      const entry = journal.find((row) => row.seq === got.seq)?.entry.kind;
      return report('not_for_this_client', got.seq, got.kind, `the ${entry} entry at seq ${got.seq} shows this connection nothing`, index);
    }
    const slot = slots.find((candidate) => !candidate.arrived);
    if (!slot) return report('duplicate', got.seq, got.kind, `seq ${got.seq} arrived again`, index);
    slot.arrived = true;
    if (got.seq < last) report('out_of_order', got.seq, got.kind, `arrived after seq ${last}`, index);
    last = Math.max(last, got.seq);
    highest = Math.max(highest, got.seq);
    if (slot.shown.kind !== got.kind) return report('wrong_update', got.seq, got.kind, `the journal shows a ${slot.shown.kind} at seq ${got.seq}`, index);
    if (slot.shown.text !== undefined && slot.shown.text !== got.text) report('wrong_update', got.seq, got.kind, `text ${JSON.stringify(got.text)}, the journal holds ${JSON.stringify(slot.shown.text)}`, index);
  });
  for (const { shown, arrived } of [...bySeq.values()].flat()) {
    if (arrived || !shown.required) continue;
    // A connection that stopped following owes only what came before the last seq it got.
    if (connection.following || shown.seq < highest) report('missing', shown.seq, shown.kind, connection.following ? 'journaled, never delivered' : `journaled, skipped: seq ${highest} arrived after it`);
  }
  return violations;
}

/** What the session's journal shows a connection that sent `prompts`, entry by entry, in seq order. */
function shownTo(journal: readonly JournalRow[], prompts: readonly string[], retried: readonly string[]): Shown[] {
  const own = [...prompts];
  const again = [...retried];
  // Whose each open turn is, oldest first: a session's turns run one at a time (FIFO), so a
  // turn's end belongs to the oldest prompt not yet ended.
  const openTurns: Array<'own' | 'retried' | 'other'> = [];
  const shown: Shown[] = [];
  for (const { seq, entry } of journal) {
    switch (entry.kind) {
      case 'update': {
        const kind = entry.update.sessionUpdate;
        shown.push({ seq, kind, text: textOf(entry.update), required: !droppable.has(kind) });
        break;
      }
      case 'notice':
        shown.push({ seq, kind: 'notice', text: entry.title, required: true });
        break;
      case 'prompt': {
        const text = entry.prompt.map((block) => (block as { text?: string }).text ?? '').join(' ');
        const mine = own.indexOf(text);
        if (mine >= 0) {
          own.splice(mine, 1);
          openTurns.push('own');
          break;
        }
        const joined = again.indexOf(text);
        if (joined >= 0) again.splice(joined, 1);
        openTurns.push(joined >= 0 ? 'retried' : 'other');
        for (const block of entry.prompt) shown.push({ seq, kind: 'user_message_chunk', text: (block as { text?: string }).text, required: joined < 0 });
        break;
      }
      case 'stop':
      case 'error': {
        const owner = openTurns.shift() ?? 'other';
        shown.push({ seq, kind: 'turn_end', text: undefined, required: owner === 'other' });
        break;
      }
      default:
        break;
    }
  }
  return shown;
}

/** The session's updates a connection received, in order, each with its seq, kind and text. */
function receivedOf(connection: ConnectionRecord): Array<{ seq: number | undefined; kind: string; text: string | undefined }> {
  return connection.frames
    .filter((frame) => frame.method === 'session/update' && frame.params?.sessionId === connection.sessionId)
    .map((frame) => {
      const update = (frame.params?.update ?? {}) as { sessionUpdate?: string; _meta?: Record<string, unknown>; title?: string };
      const seq = frame.params?._meta?.[cursorKeys.seq] as number | undefined;
      const notice = update._meta?.[noticeMeta] as { title?: string } | undefined;
      if (notice) return { seq, kind: 'notice', text: notice.title };
      if (update.sessionUpdate === 'notice') return { seq, kind: 'notice', text: update.title };
      if (update.sessionUpdate === 'session_info_update' && update._meta?.[cursorKeys.turnEnded] !== undefined) return { seq, kind: 'turn_end', text: undefined };
      return { seq, kind: update.sessionUpdate ?? '(none)', text: textOf(update) };
    });
}

function textOf(update: unknown): string | undefined {
  return (update as { content?: { text?: unknown } }).content?.text as string | undefined;
}

/** The violations as lines a failure message can carry (at most `limit`, then how many more). */
export function describeViolations(violations: readonly Violation[], limit = 40): string {
  const lines = violations.slice(0, limit).map((one) => `${one.kind}: ${one.client}, session ${one.sessionId}, seq ${one.seq ?? '(none)'}, ${one.update ?? '?'}${one.index === undefined ? '' : ` (update #${one.index})`}: ${one.detail}`);
  if (violations.length > limit) lines.push(`… and ${violations.length - limit} more`);
  return lines.join('\n');
}

/**
 * Checks once delivery had time to settle: takes what the connections received (`records()`,
 * copied), THEN reads the journal (an update is journaled before any client sees it, so the
 * journal read after holds all that arrived), and again while something is missing, until
 * `timeoutMs` passed; returns the last check's violations.
 */
export async function settledViolations(
  records: () => readonly ConnectionRecord[] | Promise<readonly ConnectionRecord[]>,
  journal: (sessionIds: readonly string[]) => Promise<ReadonlyMap<string, readonly JournalRow[]>>,
  timeoutMs = 30_000,
): Promise<Violation[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const taken = (await records()).map((record) => ({ ...record, frames: record.frames.slice() }));
    const violations = deliveryViolations(await journal([...new Set(taken.map((record) => record.sessionId))]), taken);
    if (!violations.some((one) => one.kind === 'missing') || Date.now() > deadline) return violations;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
