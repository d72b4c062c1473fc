/**
 * A child spec or supervisor option that cannot work, found before anything starts.
 *
 * The message names the option, the expected values and what was given, in the form
 * "Expected the `restart` option of child "port" to be ..., got `forever` (string)".
 * `field` and `value` carry the same facts for programs.
 */
export class SupervisorSpecError extends TypeError {
  override readonly name = 'SupervisorSpecError';
  /** The option that is wrong, as a path such as `restart` or `backoff.minDelay`. */
  readonly field: string;
  /** The value that was given. */
  readonly value: unknown;
  /** The child the option belongs to, when it belongs to a child spec. */
  readonly childId: string | undefined;

  constructor(options: { field: string; value: unknown; expected: string; childId?: string | undefined; hint?: string }) {
    const owner = options.childId === undefined ? 'supervisor' : `child "${options.childId}"`;
    const hint = options.hint ? ` ${options.hint}` : '';
    super(
      `Expected the \`${options.field}\` option of ${owner} to be ${options.expected}, ` +
        `got ${describeValue(options.value)}.${hint}`,
    );
    this.field = options.field;
    this.value = options.value;
    this.childId = options.childId;
  }
}

function describeValue(value: unknown): string {
  if (value === undefined) return '`undefined`';
  if (value === null) return '`null`';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return `\`${String(value)}\` (${typeof value})`;
}
