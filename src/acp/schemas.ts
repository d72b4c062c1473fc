/**
 * ACP validation from `@agentclientprotocol/sdk`: the SDK's own generated zod schemas, so
 * that we accept and reject exactly what the official implementation does.
 *
 * The SDK exports its JSON schemas but not its zod module; we load the zod module from the
 * installed package (pinned version), and fall back to building validators from the
 * exported JSON schema with zod's `fromJSONSchema` if a future layout moves it (slower,
 * same verdicts).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { ParamsParser } from '../jsonrpc/connection.js';

type Schema = { parse(value: unknown): unknown; safeParse(value: unknown): { success: boolean; error?: unknown; data?: unknown } };

const require = createRequire(import.meta.url);
const schemaPath = require.resolve('@agentclientprotocol/sdk/schema/v1/schema.json');
const jsonSchemas = {
  stable: require(schemaPath) as { $defs: Record<string, unknown> },
  unstable: require('@agentclientprotocol/sdk/schema/v1/schema.unstable.json') as { $defs: Record<string, unknown> },
};

async function loadGenerated(...path: string[]): Promise<Record<string, Schema> | undefined> {
  try {
    const file = join(dirname(schemaPath), '..', '..', 'dist', 'v1', ...path, 'zod.gen.js');
    return (await import(pathToFileURL(file).href)) as Record<string, Schema>;
  } catch {
    return undefined;
  }
}

const generated = { stable: await loadGenerated('schema'), unstable: await loadGenerated('unstable', 'schema') };
const built = new Map<string, Schema>();

/**
 * The validator of an ACP type by its schema name (`PromptRequest`, `SessionNotification`,
 * ...). `unstable` reaches the types of the unstable surface (`ForkSessionRequest`, ...).
 */
export function schemaOf(typeName: string, surface: 'stable' | 'unstable' = 'stable'): Schema {
  const fromSdk = generated[surface]?.[`z${typeName}`];
  if (fromSdk) return fromSdk;
  const key = `${surface}:${typeName}`;
  let schema = built.get(key);
  if (!schema) {
    const defs = jsonSchemas[surface].$defs;
    if (!(typeName in defs)) throw new TypeError(`Unknown ACP type "${typeName}" in the ${surface} schema.`);
    schema = z.fromJSONSchema({ $ref: `#/$defs/${typeName}`, $defs: defs } as never) as unknown as Schema;
    built.set(key, schema);
  }
  return schema;
}

/** A params parser for the JSON-RPC method table: throws zod's error, which maps to -32602. */
export function parserOf(typeName: string, surface: 'stable' | 'unstable' = 'stable'): ParamsParser {
  const schema = schemaOf(typeName, surface);
  return (params: unknown) => schema.parse(params ?? {});
}

/** Whether validation uses the SDK's generated schemas (true) or the JSON-schema fallback. */
export const usesSdkSchemas = generated.stable !== undefined;
