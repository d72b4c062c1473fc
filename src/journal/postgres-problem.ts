/**
 * What a PostgreSQL store's failure means to the person who has to fix it: the problem and the
 * fix, from the error's code (a SQLSTATE, the socket's, Node's, or warden's own), without the
 * database's name (the caller names it first). The journal's errors and `warden cluster status`
 * say the same.
 */
import { DAMAGED_ENTRY_CODE } from './journal.js';

/** warden's code of a login the server wants a password for when none was given (pg's own error has no code). */
export const NO_PASSWORD_CODE = 'WARDEN_NO_PASSWORD';

/** How a password reaches the server (docs/cluster.md, "Running a host on PostgreSQL"). */
const passwordFix = "set PGPASSWORD in warden's environment, or put the password in the URL (postgres://USER:PASSWORD@HOST/DB, percent-encoded)";

/** The error's code: its own, or {@link NO_PASSWORD_CODE} for pg's "client password must be a string" (SCRAM asked, no password given). */
export function postgresCodeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  if (error instanceof Error && /client password must be a string/u.test(error.message)) return NO_PASSWORD_CODE;
  return undefined;
}

/** The problem and its fix for `code` (`message`: the error's own words, kept for the details). */
export function postgresProblem(code: string, message: string): string {
  if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EPIPE)$/u.test(code) || code.startsWith('08')) return `cannot be reached (${code}: ${message}): check that PostgreSQL runs there and the URL`;
  if (code === '57P01' || code === '57P02' || code === '57P03') return `is shutting down or starting (${code}: ${message}): retry once PostgreSQL is up`;
  if (code === '53100') return `cannot grow (${code}): free some disk space on the database server`;
  if (code === NO_PASSWORD_CODE) return `asks for a password and none was given: ${passwordFix}`;
  if (code === '28P01') return `refused the login (${code}: ${message}): check the user and its password (PGPASSWORD in warden's environment, or the URL's)`;
  if (code === '28000') return `refused the login (${code}: ${message}): the server's pg_hba.conf must let this user reach this database from this machine (a line "host DB USER ADDRESS/BITS scram-sha-256", then reload PostgreSQL)`;
  if (code === '3D000') return `does not exist (${code}: ${message}): create the database first (createdb)`;
  if (code === 'ERR_INVALID_URL') return `is not a URL that parses (${code}): percent-encode what a URL reserves in the user and password (/ as %2F, @ as %40, : as %3A, # as %23, ? as %3F, % as %25), or leave the password out of the URL and set PGPASSWORD`;
  if (code === DAMAGED_ENTRY_CODE) return `holds an entry that is not JSON (${code}: ${message}): restore a backup`;
  return `failed (${code}: ${message})`;
}
