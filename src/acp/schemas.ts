/**
 * ACP validation from `@agentclientprotocol/sdk`: the SDK's own generated zod schemas, so
 * that we accept and reject exactly what the official implementation does.
 *
 * The SDK exports its JSON schemas but not its zod module; we load the zod module from the
 * installed package (pinned version), and fall back to building validators from the
 * exported JSON schema with zod's `fromJSONSchema` if a future layout moves it (slower,
 * same verdicts).
 *
 * Loaded on the first check that needs them, not at import: building the SDK's schemas
 * (and zod itself) is most of what `warden acp` spent before answering `initialize`, which
 * is checked by hand for the shapes editors send (initialize-params.ts). The loading is a
 * synchronous `require()` of the ES modules (Node ≥ 20.19, the engines floor), because a
 * params check is synchronous.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ParamsParser } from '../jsonrpc/connection.js';
import { initializeParamsOf } from './initialize-params.js';

type Schema = { parse(value: unknown): unknown; safeParse(value: unknown): { success: boolean; error?: unknown; data?: unknown } };
type Surface = 'stable' | 'unstable';

const require = createRequire(import.meta.url);
const schemaPath = require.resolve('@agentclientprotocol/sdk/schema/v1/schema.json');
const jsonSchemaFiles: Record<Surface, string> = {
  stable: schemaPath,
  unstable: require.resolve('@agentclientprotocol/sdk/schema/v1/schema.unstable.json'),
};
const generatedFiles: Record<Surface, string> = {
  stable: join(dirname(schemaPath), '..', '..', 'dist', 'v1', 'schema', 'zod.gen.js'),
  unstable: join(dirname(schemaPath), '..', '..', 'dist', 'v1', 'unstable', 'schema', 'zod.gen.js'),
};

/** The SDK's generated schemas of a surface (`null`: its file is not where it was). */
const generated = new Map<Surface, Record<string, Schema> | null>();
const built = new Map<string, Schema>();

function generatedOf(surface: Surface): Record<string, Schema> | null {
  let schemas = generated.get(surface);
  if (schemas === undefined) {
    try {
      schemas = require(generatedFiles[surface]) as Record<string, Schema>;
    } catch {
      schemas = null;
    }
    generated.set(surface, schemas);
  }
  return schemas;
}

function builtFromJson(typeName: string, surface: Surface): Schema {
  const key = `${surface}:${typeName}`;
  let schema = built.get(key);
  if (!schema) {
    const defs = (require(jsonSchemaFiles[surface]) as { $defs: Record<string, unknown> }).$defs;
    if (!(typeName in defs)) throw new TypeError(`Unknown ACP type "${typeName}" in the ${surface} schema.`);
    const { z } = require('zod') as typeof import('zod');
    schema = z.fromJSONSchema({ $ref: `#/$defs/${typeName}`, $defs: defs } as never) as unknown as Schema;
    built.set(key, schema);
  }
  return schema;
}

/**
 * The validator of an ACP type by its schema name (`PromptRequest`, `SessionNotification`,
 * ...). `unstable` reaches the types of the unstable surface (`ForkSessionRequest`, ...).
 * The first call loads the schemas.
 */
export function schemaOf(typeName: string, surface: Surface = 'stable'): Schema {
  return generatedOf(surface)?.[`z${typeName}`] ?? builtFromJson(typeName, surface);
}

/**
 * A params parser for the JSON-RPC method table: throws zod's error, which maps to -32602.
 * The schema is looked up (and loaded) on the first params it checks.
 */
export function parserOf(typeName: string, surface: Surface = 'stable'): ParamsParser {
  let schema: Schema | undefined;
  const parse = (params: unknown) => (schema ??= schemaOf(typeName, surface)).parse(params ?? {});
  if (typeName !== 'InitializeRequest' || surface !== 'stable') return parse;
  return (params: unknown) => initializeParamsOf(params) ?? parse(params);
}

/** Whether validation uses the SDK's generated schemas (true) or the JSON-schema fallback. */
export const usesSdkSchemas = existsSync(generatedFiles.stable);
