/**
 * ACP v2 method names, from the SDK's generated v2 tables (never typed by hand), beside the v1
 * tables of methods.ts. The edges that speak v2 (src/acp/) map these to the version-neutral
 * events of the core; nothing below src/acp/ names a v2 method.
 */
import { createRequire } from 'node:module';

type SdkV2 = typeof import('@agentclientprotocol/sdk/experimental/v2');

// The plain-constant module of the v2 schema, found beside the v2 JSON schema the SDK exports
// (its entry point builds every zod schema on import, which a method name does not need).
const require = createRequire(import.meta.url);
const sdkV2Methods = require(require.resolve('@agentclientprotocol/sdk/schema/v2/schema.json').replace(/schema[\\/]v2[\\/]schema\.json$/u, 'dist/v2/schema/index.js')) as Pick<SdkV2, 'AGENT_METHODS' | 'CLIENT_METHODS' | 'PROTOCOL_METHODS' | 'PROTOCOL_VERSION'>;

/** Methods a v2 agent serves, by the SDK's names for them (`auth_login: 'auth/login'`). */
export const V2_AGENT_METHODS: SdkV2['AGENT_METHODS'] = sdkV2Methods.AGENT_METHODS;
/** Methods a v2 client serves (no `fs/*`, no `terminal/*`: v2 terminals are the agent's). */
export const V2_CLIENT_METHODS: SdkV2['CLIENT_METHODS'] = sdkV2Methods.CLIENT_METHODS;
/** The protocol version of the v2 tables (2). */
export const V2_PROTOCOL_VERSION: SdkV2['PROTOCOL_VERSION'] = sdkV2Methods.PROTOCOL_VERSION;
