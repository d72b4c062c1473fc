/** Small waits the journal specs share: a promise's rejection, a condition polled until it holds, the clock's next millisecond. */
import { setTimeout as sleep } from 'node:timers/promises';

/** The error `promise` rejects with; throws when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to reject, and it resolved');
}

/** Polls `check` every 50 ms until it holds (never a fixed sleep), failing after `within` ms. */
export async function until(check: () => Promise<boolean>, within = 60_000): Promise<void> {
  const deadline = Date.now() + within;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

/** Resolves once the wall clock reads a later millisecond than at the call: stamps taken after it are later than any before. */
export async function nextMillisecond(): Promise<void> {
  const now = Date.now();
  while (Date.now() <= now) await new Promise((resolve) => setImmediate(resolve));
}
