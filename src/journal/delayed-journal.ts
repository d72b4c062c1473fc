/**
 * A journal with timing faults: every call to an {@link AsyncJournal} is delayed by a random,
 * seeded amount, so that reads and commits interleave as they do on a slow or distant database
 * (a page read answered after an entry committed, a `lastSeq` older than the last update the
 * host delivered). Races between readers and writers that one lucky interleaving never shows
 * are met this way in tests and chaos runs (docs/proof.md, "Timing faults in the journal").
 *
 * What it keeps: the journal's own semantics. A call still runs once, in the order the host
 * made it for each session (the host's write queue issues one call of a session at a time);
 * only when it runs and when its answer arrives move. A read either runs late (a fresh answer,
 * late) or runs now and answers late (a stale answer, which is what a query in flight gives
 * while another connection commits).
 */
import type { AsyncJournal } from './async-journal.js';
import { seededRandom } from './seeded-random.js';

/** How much to delay journal calls: each call waits a random time in `[0, maxMs]`, drawn from `seed`. */
export interface JournalDelay {
  /** The seed of the delays (the same seed, the same sequence of draws). */
  readonly seed: number;
  /** The longest delay of one call, in milliseconds (0: none). */
  readonly maxMs: number;
}

/** The calls that only read: these may answer with what the store held when they ran, late. */
const reads = new Set<keyof AsyncJournal>(['getSession', 'listSessions', 'entries', 'readEntries', 'stateEntries', 'lastSeq', 'promptByKey']);

/**
 * `journal` with each call delayed (see the module's comment). A write waits before it runs
 * and again before its answer is passed on (committed, not yet acknowledged); a read runs
 * either late or now with a late answer, at random. `close` is not delayed.
 *
 * @example
 * ```ts
 * const journal = delayedJournal(asyncJournalOf(sqliteJournal(path)), { seed: 7, maxMs: 20 });
 * ```
 */
export function delayedJournal(journal: AsyncJournal, delay: JournalDelay): AsyncJournal {
  if (!(Number.isInteger(delay.maxMs) && delay.maxMs >= 0)) throw new TypeError(`Expected the journal delay's \`maxMs\` to be a whole number of milliseconds >= 0, got \`${String(delay.maxMs)}\`.`);
  const random = seededRandom(delay.seed);
  const pause = () => new Promise<void>((resolve) => setTimeout(resolve, Math.floor(random() * (delay.maxMs + 1))));
  const delayed = <K extends keyof AsyncJournal>(key: K): AsyncJournal[K] => {
    const call = (journal[key] as (...args: unknown[]) => Promise<unknown>).bind(journal);
    const wrapped = async (...args: unknown[]) => {
      if (reads.has(key) && random() < 0.5) {
        // Runs now, answers late: the answer is as old as a query that was in flight meanwhile.
        const answer = call(...args);
        answer.catch(() => undefined); // seen below, after the pause
        await pause();
        return answer;
      }
      await pause();
      const answer = await call(...args);
      await pause();
      return answer;
    };
    return wrapped as unknown as AsyncJournal[K];
  };
  return {
    createSession: delayed('createSession'),
    recordChild: delayed('recordChild'),
    childSessions: delayed('childSessions'),
    forkSession: delayed('forkSession'),
    getSession: delayed('getSession'),
    listSessions: delayed('listSessions'),
    append: delayed('append'),
    appendGroup: delayed('appendGroup'),
    deleteSession: delayed('deleteSession'),
    entries: delayed('entries'),
    readEntries: delayed('readEntries'),
    stateEntries: delayed('stateEntries'),
    lastSeq: delayed('lastSeq'),
    promptByKey: delayed('promptByKey'),
    claim: delayed('claim'),
    release: delayed('release'),
    setResume: delayed('setResume'),
    setState: delayed('setState'),
    close: () => journal.close(),
  };
}

/**
 * Reads a {@link JournalDelay} from its text form `SEED:MAX_MS` (what `WARDEN_FAULT_JOURNAL_DELAY`
 * holds); throws a message naming the expected form.
 */
export function parseJournalDelay(text: string): JournalDelay {
  const match = /^(\d+):(\d+)$/u.exec(text.trim());
  if (!match) throw new TypeError(`Expected a journal delay as SEED:MAX_MS (two whole numbers, e.g. 42:20), got ${JSON.stringify(text)}.`);
  return { seed: Number(match[1]), maxMs: Number(match[2]) };
}
