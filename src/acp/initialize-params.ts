/**
 * `initialize`'s params checked by hand for the shapes editors send, so that `warden acp`
 * answers `initialize` before the SDK's zod schemas are loaded (they are most of its startup
 * CPU: docs/benchmarks.md "Startup"). Only a shape this check fully understands is taken
 * here, built exactly as the SDK's `zInitializeRequest` builds it (its key order, its
 * defaults, unknown keys dropped); anything else (a bad protocol version, an unknown or
 * mistyped field, `_meta`) answers `undefined` and goes to the SDK's schema, so every
 * verdict and error message stays the SDK's. spec/acp/initialize-params.spec.ts compares
 * the two.
 */

type Fields = Readonly<Record<string, unknown>>;

/** A plain object whose keys are all among `allowed` and none holds `undefined`. */
function objectOf(value: unknown, allowed: readonly string[]): Fields | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  for (const [key, field] of Object.entries(value)) {
    if (!allowed.includes(key) || field === undefined) return undefined;
  }
  return value as Fields;
}

const absent = Symbol('absent');
/** A boolean, `absent` when missing, `undefined` when it is something else. */
function flag(fields: Fields, key: string): boolean | typeof absent | undefined {
  if (!(key in fields)) return absent;
  const value = fields[key];
  return typeof value === 'boolean' ? value : undefined;
}

function capabilitiesOf(value: unknown): Record<string, unknown> | undefined {
  const given = value === absent ? {} : objectOf(value, ['fs', 'terminal', 'auth']);
  if (!given) return undefined;
  const fs = 'fs' in given ? objectOf(given.fs, ['readTextFile', 'writeTextFile']) : {};
  const auth = 'auth' in given ? objectOf(given.auth, ['terminal']) : {};
  if (!fs || !auth) return undefined;
  const read = flag(fs, 'readTextFile');
  const write = flag(fs, 'writeTextFile');
  const terminal = flag(given, 'terminal');
  const authTerminal = flag(auth, 'terminal');
  if (read === undefined || write === undefined || terminal === undefined || authTerminal === undefined) return undefined;
  const or = (given: boolean | typeof absent) => (given === absent ? false : given);
  return { fs: { readTextFile: or(read), writeTextFile: or(write) }, terminal: or(terminal), auth: { terminal: or(authTerminal) } };
}

function clientInfoOf(value: unknown): Record<string, unknown> | undefined {
  const info = objectOf(value, ['name', 'title', 'version']);
  if (!info || typeof info.name !== 'string' || typeof info.version !== 'string') return undefined;
  if ('title' in info && typeof info.title !== 'string') return undefined;
  return 'title' in info ? { name: info.name, title: info.title, version: info.version } : { name: info.name, version: info.version };
}

/**
 * The parsed `initialize` params when `params` has a shape this check fully understands
 * (what the SDK's schema would return for it), else `undefined`: ask the SDK's schema.
 */
export function initializeParamsOf(params: unknown): Record<string, unknown> | undefined {
  const given = objectOf(params, ['protocolVersion', 'clientCapabilities', 'clientInfo']);
  if (!given) return undefined;
  const version = given.protocolVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0 || version > 65535) return undefined;
  const clientCapabilities = capabilitiesOf('clientCapabilities' in given ? given.clientCapabilities : absent);
  if (!clientCapabilities) return undefined;
  if (!('clientInfo' in given)) return { protocolVersion: version, clientCapabilities };
  const clientInfo = clientInfoOf(given.clientInfo);
  return clientInfo ? { protocolVersion: version, clientCapabilities, clientInfo } : undefined;
}
