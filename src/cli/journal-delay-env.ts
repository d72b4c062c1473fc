/**
 * `WARDEN_FAULT_JOURNAL_DELAY=SEED:MAX_MS`: the journal's timing faults for a `warden acp` or
 * `warden serve` under test (docs/proof.md, "Timing faults in the journal"). An environment
 * variable, not a flag: it is for the test harness that starts warden, never for a user's command line.
 */
import { parseJournalDelay, type JournalDelay } from '../journal/delayed-journal.js';

/** The variable's name. */
export const JOURNAL_DELAY_ENV = 'WARDEN_FAULT_JOURNAL_DELAY';

/** The host option the environment asks for (none when the variable is unset or empty); throws naming the variable when it is malformed. */
export function journalDelayOfEnv(env: NodeJS.ProcessEnv = process.env): { readonly journalDelay?: JournalDelay } {
  const text = env[JOURNAL_DELAY_ENV];
  if (!text) return {};
  try {
    return { journalDelay: parseJournalDelay(text) };
  } catch (error) {
    throw new TypeError(`${JOURNAL_DELAY_ENV}: ${(error as Error).message} Unset it to run without timing faults.`);
  }
}
