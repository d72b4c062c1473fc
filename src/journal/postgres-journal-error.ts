/**
 * A PostgreSQL store's failures as the journal reports them: which errors are the connection
 * (worth retrying: the server away, not refusing), and the store's own errors as
 * {@link PostgresJournalError}, named without the password (postgres-problem.ts says the fix).
 */
import { FencedAppendError } from './async-journal.js';
import { InvalidCursorError, JournalError, SessionOwnedError, UnknownSessionError } from './journal.js';
import { postgresCodeOf, postgresProblem } from './postgres-problem.js';

/** The store failed (unreachable, shut down, out of space, …): the message names the database (without its password), the code and what to do. */
export class PostgresJournalError extends JournalError {
  /** What is wrong and the fix, without the database's name (the message has both). */
  readonly problem: string;
  /** How long the call was retried before it gave up, in ms (0: the error is not a connection error, or `retryFor` is 0). */
  readonly retriedFor: number;
  constructor(where: string, code: string, cause: unknown, retriedFor = 0) {
    super(where, code, { cause });
    this.problem = postgresProblem(code, (cause as Error).message);
    this.retriedFor = retriedFor;
    this.message = `the journal ${where} ${this.problem}${retriedFor ? ` (gave up after retrying for ${retriedFor} ms: the retryFor option)` : ''}`;
  }
}

/**
 * The code of a connection error (one worth retrying: the server is away, not refusing the
 * call), else `undefined`: SQLSTATE class 08 (connection exception), 57P01/57P02/57P03 (admin
 * or crash shutdown, cannot connect now), the socket's ECONNREFUSED, ECONNRESET, EPIPE,
 * ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, and pg's own errors of a connection lost (no code:
 * SQLSTATE's connection_failure, 08006).
 */
export function connectionErrorCode(error: unknown): string | undefined {
  if (error instanceof JournalError) return undefined;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return /^(08...|57P0[123]|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)$/u.test(code) ? code : undefined;
  if (error instanceof Error && /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/u.test(error.message)) return '08006';
  return undefined;
}

/** The store's own errors as {@link PostgresJournalError}; the journal's own (unknown session, fenced, owned, cursor) pass through. */
export function storeError(where: string, error: unknown): Error {
  if (error instanceof JournalError || error instanceof UnknownSessionError || error instanceof FencedAppendError || error instanceof SessionOwnedError || error instanceof InvalidCursorError) return error;
  const code = connectionErrorCode(error) ?? postgresCodeOf(error);
  if (code !== undefined) return new PostgresJournalError(where, code, error);
  return error instanceof Error ? error : new Error(String(error));
}
