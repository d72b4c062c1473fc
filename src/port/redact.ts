/**
 * Secrets out of text that leaves the process: a CLI's stderr tail (carried in error data,
 * log lines, the inspector), inspection payloads. Two kinds of knowledge, both needed:
 *
 * - the **values**: what the env policy actually gave a child under a secret name
 *   (`ANTHROPIC_API_KEY`, `--env MY_TOKEN=…`) or in a proxy address with a password
 *   (`HTTPS_PROXY=http://user:pass@proxy`), and the host's own values of those variables.
 *   A key of any shape is found wherever it sits in a line;
 * - the **shapes**: keys that look like keys (`sk-ant-…`, `sk-…`, `sk_live_…`, `ghp_…`,
 *   `AIza…`, `AKIA…`, JWTs), `Bearer` tokens, the password in a URL (`scheme://user:pass@host`),
 *   `NAME=value` / `NAME: value` / `"name": "value"` (a quoted value up to its closing quote)
 *   and `--name value` for a secret-like NAME, for keys warden never saw (read by the CLI from
 *   a config file).
 *
 * Each becomes `[redacted]`; the text around it stays, so an error still says what went wrong.
 */

/** The redaction mark. */
export const REDACTED = '[redacted]';

/**
 * Names (of variables, headers, JSON keys) whose values are secrets: keys, tokens (not
 * `tokens`, the count), secrets, passwords, credentials, authorization, cookies.
 */
const secretNameSource = String.raw`(?:api[-_]?key|access[-_]?key|token(?!s)|secret|passw(?:or)?d|credential|authorization|cookie|private[-_]?key)`;
const secretNamePattern = new RegExp(secretNameSource, 'iu');

/** Whether a variable (or header, or key) name says its value is a secret. */
export function isSecretName(name: string): boolean {
  return secretNamePattern.test(name);
}

/** Values shorter than this are not redacted by value (a `1` or `true` would garble every message); shapes still apply. */
export const minSecretLength = 8;

/** Keys by shape, wherever they sit (not inside a longer word: `task-…` is no `sk-` key). */
const keyShapes: readonly RegExp[] = [
  /(?<![\w-])sk-ant-[\w-]{8,}/gu,
  /(?<![\w-])sk-[\w-]{8,}/gu,
  /(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})/gu,
  /(?<![\w-])AIza[\w-]{30,}/gu,
  /(?<![\w-])xox[abprs]-[\w-]{10,}/gu,
  /(?<![\w-])[rs]k_(?:live|test)_[A-Za-z0-9]{10,}/gu,
  /(?<![\w-])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])/gu,
  /(?<![\w-])(?:glpat-[\w-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{30,})/gu,
  /(?<![\w-])eyJ[\w-]{10,}\.eyJ[\w-]{4,}\.[\w-]*/gu,
];

/**
 * The password in a URL's userinfo (`https://user:pass@proxy:8080`): the user and the host
 * stay. Greedy up to the last `@` of the authority, so a password holding an unescaped `@` goes whole.
 * The scheme starts a word and is bounded (32 characters): a long run of `a.a.a…` costs linear time.
 */
const urlPassword = /((?<![\w+.-])[a-z][\w+.-]{0,31}:\/\/[^\s/?#@:]*:)[^\s/?#]+(?=@)/giu;

/** `Bearer <token>` (and Basic, Token): the scheme stays. */
const bearer = /\b(Bearer|Basic|Token)([ \t]+)(?!-)[\w.~+/=-]{8,}/giu;

/**
 * `NAME=value`, `NAME: value`, `"name": "value"` for a secret-like NAME (an env dump, a
 * config line, a header, a URL's `access_token=`, `password%3D…` in an encoded query): the
 * name stays, the value goes; a quoted value up to its closing quote (or the end of the line),
 * spaces and all.
 */
const assignment = new RegExp(
  String.raw`(?<![\w-])([\w-]*?${secretNameSource}[\w-]*)(["']?[ \t]*(?:[=:]|%3[Dd])[ \t]*)(?:(["'])((?:(?!\3)[^\\\n]|\\.)+)(\3?)|(?:(?:Bearer|Basic|Token)[ \t]+)?(?:\[redacted\]|[^\s"',;&)}\]]+))`,
  'giu',
);

/**
 * `--api-key VALUE`, `--token VALUE` (a flag with a secret-like name, then its value after a
 * space): the flag stays. A short lowercase word after it is prose (`set --api-key or
 * ANTHROPIC_API_KEY`), not a value, and stays too; so does a next flag.
 */
const flagValue = new RegExp(
  String.raw`(?<![\w-])(--?[\w-]*?${secretNameSource}[\w-]*[ \t]+)(?:(["'])(?:(?!\2)[^\\\n]|\\.)+\2?|\[redacted\]|(?!-)[^\s"',;)}\]]+)`,
  'giu',
);

/** The replacement of an {@link assignment} match: a quoted value keeps its quotes. */
function redactAssignment(_match: string, name: string, separator: string, quote: string | undefined, _body: string | undefined, close: string | undefined): string {
  return quote === undefined ? `${name}${separator}${REDACTED}` : `${name}${separator}${quote}${REDACTED}${close ?? ''}`;
}

/** A short plain lowercase word (and its full stop): prose after a flag's name (`--api-key is required`), not its value; a longer one may be a key. */
const proseWord = /^[a-z]{1,12}[.:!?]?$/u;

/** The replacement of a {@link flagValue} match: a quoted value keeps its quotes. */
function redactFlagValue(match: string, flag: string, quote: string | undefined): string {
  if (quote === undefined) return proseWord.test(match.slice(flag.length)) ? match : `${flag}${REDACTED}`;
  return `${flag}${quote}${REDACTED}${match.endsWith(quote) && match.length > flag.length + 1 ? quote : ''}`;
}

/** Names of proxy variables (`HTTPS_PROXY`, `http_proxy`, `ALL_PROXY`): their values may hold a password. */
const proxyNamePattern = /(?:^|_)proxy$/iu;

/**
 * What is secret in a proxy address: nothing without userinfo (`http://proxy:3128` stays
 * readable everywhere); with it, the whole address and its password (as written and decoded).
 */
function proxySecrets(value: string): string[] {
  let url: URL;
  try {
    url = new URL(value.includes('://') ? value : `http://${value}`);
  } catch {
    return [];
  }
  if (url.username === '' && url.password === '') return [];
  const secret = url.password === '' ? url.username : url.password;
  let decoded = secret;
  try {
    decoded = decodeURIComponent(secret);
  } catch {
    // A malformed escape: the password as written is all there is.
  }
  return [value, secret, decoded];
}

/**
 * The secret values in an environment: those of secret-named variables, and the
 * address and password of a proxy variable with a password in it (`HTTPS_PROXY=http://u:p@h`),
 * at least {@link minSecretLength} long. `env` is what a child was given; pass the host's
 * (`process.env`) too to cover what the host holds.
 */
export function secretValuesOf(...envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>): string[] {
  const values = new Set<string>();
  const add = (value: string) => {
    if (value.length >= minSecretLength) values.add(value);
  };
  for (const env of envs) {
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined) continue;
      if (isSecretName(name)) add(value);
      else if (proxyNamePattern.test(name)) for (const secret of proxySecrets(value)) add(secret);
    }
  }
  // Longest first: a value that contains another is replaced whole.
  return [...values].sort((a, b) => b.length - a.length);
}

/** Whether a text could hold a secret shape at all: most text cannot, and skips the patterns. */
const mayHoldShape = new RegExp(String.raw`sk-|[rs]k_|gh[pousr]_|github_pat_|AIza|AKIA|ASIA|glpat-|hf_|npm_|eyJ|xox[abprs]-|bearer|basic|${secretNameSource}`, 'iu');

/** `text` with every known value and every secret shape replaced by {@link REDACTED}. */
export function redactSecrets(text: string, values: readonly string[] = []): string {
  let out = text;
  for (const value of values) if (value.length >= minSecretLength && out.includes(value)) out = out.split(value).join(REDACTED);
  // A URL with a password has both; most text with URLs (paths, `file://` ids) has no `@`.
  if (out.includes('@') && out.includes('://')) out = out.replace(urlPassword, `$1${REDACTED}`);
  if (!mayHoldShape.test(out)) return out;
  for (const shape of keyShapes) out = out.replace(shape, REDACTED);
  out = out.replace(bearer, `$1$2${REDACTED}`);
  out = out.replace(flagValue, redactFlagValue);
  return out.replace(assignment, redactAssignment);
}

/** What the host holds under secret names and in proxy addresses (`process.env`), read now (only those variables are read: each read of `process.env` costs). */
export function hostSecretValues(): string[] {
  const secret: Record<string, string | undefined> = {};
  for (const name of Object.keys(process.env)) if (isSecretName(name) || proxyNamePattern.test(name)) secret[name] = process.env[name];
  return secretValuesOf(secret);
}

/**
 * Values the ports of this process passed to their children under secret names (an
 * `--env NAME=value` the host itself does not hold): so that the inspector, which sees
 * only payloads, redacts them too. Bounded; the oldest go first.
 */
const passedToChildren = new Set<string>();
const maxRemembered = 256;

/** Remembers secret values given to a child (see {@link knownSecretValues}). */
export function rememberSecretValues(values: readonly string[]): void {
  for (const value of values) {
    passedToChildren.delete(value);
    passedToChildren.add(value);
  }
  while (passedToChildren.size > maxRemembered) passedToChildren.delete(passedToChildren.values().next().value as string);
  childrenVersion++;
}

let childrenVersion = 0;
/** The answer of {@link knownSecretValues} for the rest of this turn of the event loop (an actor step sends many inspection events; reading `process.env` for each cost 30 µs). */
let known: { readonly children: number; readonly values: readonly string[] } | undefined;

/** Every secret value known here: the host's (read once per turn of the event loop), and those given to children; longest first. */
export function knownSecretValues(): readonly string[] {
  if (known?.children === childrenVersion) return known.values;
  known = { children: childrenVersion, values: [...new Set([...hostSecretValues(), ...passedToChildren])].sort((a, b) => b.length - a.length) };
  queueMicrotask(() => {
    known = undefined;
  });
  return known.values;
}

/**
 * The redaction for what a child prints: the secret values its environment holds and the
 * host's, and the shapes. Remembers the child's values for {@link knownSecretValues}.
 */
export function redactorFor(env: Readonly<Record<string, string>>): (text: string) => string {
  const given = secretValuesOf(env);
  rememberSecretValues(given);
  const values = secretValuesOf(env, process.env);
  return (text) => redactSecrets(text, values);
}
