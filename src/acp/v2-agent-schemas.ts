/**
 * The SDK's generated ACP v2 validators for what a v2 agent sends its client (warden):
 * `session/update`, `session/request_permission`, `elicitation/create`. Loaded on the first
 * message that needs them (as schemas.ts loads v1's: startup never pays for them), with a
 * synchronous `require()` of the SDK's v2 zod module, since a params check is synchronous.
 * Kept apart from schemas.ts for now: it is to be folded in there with its v2 surfaces.
 */
import { createRequire } from 'node:module';
import type { ParamsParser } from '../jsonrpc/connection.js';

type Schema = { parse(value: unknown): unknown };

const require = createRequire(import.meta.url);
const zodFile = require.resolve('@agentclientprotocol/sdk/schema/v2/schema.json').replace(/schema[\\/]v2[\\/]schema\.json$/u, 'dist/v2/schema/zod.gen.js');
let schemas: Record<string, Schema> | undefined;

/** The v2 validator of an ACP type by its schema name (`UpdateSessionNotification`, ...). */
export function v2SchemaOf(typeName: string): Schema {
  schemas ??= require(zodFile) as Record<string, Schema>;
  const schema = schemas[`z${typeName}`];
  if (!schema) throw new TypeError(`Unknown ACP v2 type "${typeName}".`);
  return schema;
}

/** A params parser (throws zod's error, which the connection answers -32602) for a v2 type, looked up on first use. */
export function v2ParserOf(typeName: string): ParamsParser {
  let schema: Schema | undefined;
  return (params: unknown) => (schema ??= v2SchemaOf(typeName)).parse(params ?? {});
}

/** The v2 types of what a v2 agent asks or tells its client, by method. */
export const v2InboundTypes: Readonly<Record<string, string>> = {
  'session/update': 'UpdateSessionNotification',
  'session/request_permission': 'RequestPermissionRequest',
  'elicitation/create': 'CreateElicitationRequest',
  'elicitation/complete': 'CompleteElicitationNotification',
};
