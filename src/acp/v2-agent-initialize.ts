/**
 * `initialize` toward an agent, when warden offers it ACP v2 (the client role; the editor-facing
 * side is src/acp/v2-initialize.ts). The request is offered in both shapes at once, version 2
 * with v2's `info` and `capabilities` beside v1's `clientInfo` and `clientCapabilities`: an agent
 * that speaks v2 (the SDK's protocol router, claude-agent-acp, codex-acp) takes the v2 members
 * and answers 2; one that speaks only v1 answers 1. Not transparent for every v1 agent: the
 * SDK's router, serving v1 only, reads a request for version 2 as a v2 one downgraded (no client
 * fs, no terminal: spec/acp/v2-agent-initialize.spec.ts pins it), so v2 is offered only to the
 * agents set to speak it. The v2 answer is kept in v1's terms, the core's: presence objects
 * become flags, `session` (the v2 baseline: new, list, resume with and without replay, close)
 * becomes `loadSession` and the session capabilities, auth methods get their v1 `id` (an `agent`
 * method no type: v1's default), and a non-empty list of them means logout is served (v2 makes
 * `auth/login` and `auth/logout` go together).
 */
import type { ClientCapabilities, Implementation, InitializeRequest, InitializeResponse } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { V2_PROTOCOL_VERSION } from '../protocol/methods-v2.js';

/** Client capability keys v2 has under the same name; fs, terminal, session and plan are v1's only. */
const v1OnlyClientKeys = new Set(['fs', 'terminal', 'session', 'plan']);

/** The `initialize` params warden sends an agent it offers v2: both shapes (see the module's comment). */
export function initializeRequestOfferingV2(clientInfo: Implementation, capabilities: ClientCapabilities): InitializeRequest & V2.InitializeRequest {
  const v1 = capabilities as ClientCapabilities & Record<string, unknown>;
  const v2Capabilities = Object.fromEntries(Object.entries(v1).filter(([key, value]) => !v1OnlyClientKeys.has(key) && value !== undefined && value !== null && key !== 'auth'));
  const terminalAuth = (v1.auth as { terminal?: unknown } | undefined)?.terminal === true;
  return {
    protocolVersion: V2_PROTOCOL_VERSION,
    info: clientInfo as V2.Implementation,
    capabilities: { ...v2Capabilities, ...(terminalAuth ? { auth: { terminal: {} } } : {}) } as V2.ClientCapabilities,
    clientInfo,
    clientCapabilities: capabilities,
  };
}

/** A v2 agent's `initialize` answer in v1's terms, as the core keeps an agent's answer (`protocolVersion` stays 2). */
export function agentInitializeFromV2(result: V2.InitializeResponse): InitializeResponse {
  const capabilities = result.capabilities ?? {};
  const session = (capabilities.session ?? undefined) as (V2.SessionCapabilities & Record<string, unknown>) | undefined;
  const prompt = session?.prompt ?? {};
  const mcp = session?.mcp ?? {};
  const has = (value: unknown) => value !== undefined && value !== null;
  const authMethods = (result.authMethods ?? []).map((method) => {
    const { methodId, type, ...rest } = method as V2.AuthMethod & { methodId: string; type: string };
    // v1's agent method has no type (it is the default); the others keep theirs.
    return { ...rest, id: methodId, ...(type === 'agent' ? {} : { type }) };
  });
  const agentCapabilities = {
    loadSession: has(session),
    promptCapabilities: { image: has(prompt.image), audio: has(prompt.audio), embeddedContext: has(prompt.embeddedContext) },
    mcpCapabilities: { http: has(mcp.http), sse: false },
    ...(has(session)
      ? {
          sessionCapabilities: {
            list: {},
            resume: {},
            close: {},
            ...(has(session?.delete) ? { delete: {} } : {}),
            ...(has(session?.additionalDirectories) ? { additionalDirectories: {} } : {}),
            // Unstable in both versions: served when the agent says so.
            ...(has(session?.fork) ? { fork: {} } : {}),
          },
        }
      : {}),
    ...(authMethods.length > 0 ? { auth: { logout: {} } } : {}),
    ...(capabilities._meta ? { _meta: capabilities._meta } : {}),
  };
  return {
    protocolVersion: result.protocolVersion,
    agentCapabilities,
    authMethods,
    agentInfo: result.info as Implementation,
    ...(result._meta ? { _meta: result._meta } : {}),
  } as InitializeResponse;
}
