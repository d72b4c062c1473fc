/**
 * What a `store` string names: a PostgreSQL URL or a SQLite path, and the URL as errors may
 * show it (never with its password).
 */

/** Whether `store` is a PostgreSQL connection string (`postgres://…` or `postgresql://…`). */
export function isPostgresUrl(store: string): boolean {
  return /^postgres(ql)?:\/\//i.test(store);
}

/** The URL without its password: errors and logs name the database, never the secret. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(an invalid URL)';
  }
}
