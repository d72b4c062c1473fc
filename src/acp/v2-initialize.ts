/**
 * `initialize` between ACP v2 and the version-neutral context warden keeps (v1's names: the
 * core and the journal speak them). A v2 client's request becomes the context a v1 one would
 * give, as the SDK's protocol router maps a v2 client for a v1 agent (no `fs`, no `terminal`:
 * v2 has no client-side file or terminal methods; boolean config options and plans, which
 * every v2 client takes; terminal auth as a flag), except that capability keys neither version
 * names are kept, not dropped: they are for the agent behind (a capability warden does not know
 * yet still reaches an agent that does). The answer goes the other way: v1 flags become v2's
 * presence objects (`{}`: supported).
 */
import type { ClientCapabilities, Implementation, InitializeResponse } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { V2_PROTOCOL_VERSION } from '../protocol/methods-v2.js';

/** A client's initialize as the core keeps it, whichever version the client spoke. */
export interface ClientContextParams {
  readonly protocolVersion: number;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo?: Implementation;
  readonly _meta?: Record<string, unknown>;
}

/** Capability keys of a v2 client that have a v1 meaning (mapped); any other key is kept as it is. */
const mappedClientKeys = new Set(['auth', 'elicitation', '_meta']);

/** A v2 client's `initialize` params as the version-neutral context (see the module comment). */
export function clientContextOfV2(params: V2.InitializeRequest): ClientContextParams {
  const capabilities = (params.capabilities ?? {}) as V2.ClientCapabilities & Record<string, unknown>;
  const kept = Object.fromEntries(Object.entries(capabilities).filter(([key, value]) => !mappedClientKeys.has(key) && value !== null && value !== undefined));
  const auth = capabilities.auth;
  const clientCapabilities = {
    ...kept,
    fs: { readTextFile: false, writeTextFile: false },
    terminal: false,
    session: { configOptions: { boolean: {} } },
    plan: {},
    auth: { terminal: auth?.terminal !== null && auth?.terminal !== undefined, ...(auth?._meta ? { _meta: auth._meta } : {}) },
    ...(capabilities.elicitation ? { elicitation: capabilities.elicitation } : {}),
    ...(capabilities._meta ? { _meta: capabilities._meta } : {}),
  } as ClientCapabilities;
  return {
    protocolVersion: V2_PROTOCOL_VERSION,
    clientCapabilities,
    ...(params.info ? { clientInfo: params.info as Implementation } : {}),
    ...(params._meta ? { _meta: params._meta } : {}),
  };
}

/** What warden says of itself when its agent named nothing (v2 requires `info`). */
export interface ServerInfo {
  readonly name: string;
  readonly version: string;
}

/**
 * A v1-shaped `initialize` answer (what the host and its agents say) as a v2 client reads it:
 * `agentInfo` → `info`, `agentCapabilities` → `capabilities` with presence objects. The v2
 * baseline (new, list, resume, close, prompt, cancel) needs no flag; `loadSession` becomes
 * `session/resume` with `replayFrom`, also baseline. Unknown keys and `_meta` pass.
 */
export function initializeResponseToV2(result: InitializeResponse, server: ServerInfo): V2.InitializeResponse {
  const v1 = (result.agentCapabilities ?? {}) as NonNullable<InitializeResponse['agentCapabilities']> & Record<string, unknown>;
  const prompt = v1.promptCapabilities ?? {};
  const mcp = v1.mcpCapabilities ?? {};
  const sessions = (v1.sessionCapabilities ?? {}) as Record<string, unknown>;
  const flag = (on: unknown) => (on ? {} : undefined);
  const present = <T extends Record<string, unknown>>(value: T) => Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as T;
  const session = present({
    prompt: present({ image: flag(prompt.image), audio: flag(prompt.audio), embeddedContext: flag(prompt.embeddedContext) }),
    // Stdio MCP servers are every v1 agent's baseline; v1's `sse` has no v2 name.
    mcp: present({ stdio: {}, http: flag(mcp.http) }),
    delete: sessions.delete ? {} : undefined,
    additionalDirectories: sessions.additionalDirectories ? {} : undefined,
  });
  const auth = (v1.auth ?? undefined) as V2.AgentAuthCapabilities | undefined;
  const capabilities = present({ session, auth: auth ? { ...(auth._meta ? { _meta: auth._meta } : {}) } : undefined, _meta: v1._meta ?? undefined });
  const info = (result.agentInfo ?? server) as V2.Implementation;
  return present({
    protocolVersion: V2_PROTOCOL_VERSION,
    info: { name: info.name, version: info.version, ...(info.title ? { title: info.title } : {}) },
    capabilities,
    authMethods: result.authMethods ? result.authMethods.map(authMethodToV2) : undefined,
    _meta: result._meta ?? undefined,
  }) as V2.InitializeResponse;
}

/** An auth method as v2 names it: its id is `methodId`, its `type` always said (v1's default is `agent`). */
export function authMethodToV2(method: NonNullable<InitializeResponse['authMethods']>[number]): V2.AuthMethod {
  const { id, ...rest } = method as { id: string; type?: string } & Record<string, unknown>;
  return { ...rest, type: rest.type ?? 'agent', methodId: id } as V2.AuthMethod;
}
