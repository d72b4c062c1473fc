/**
 * A v2 editor's requests as the version-neutral (v1-named) requests the core serves, and their
 * answers back in v2's shapes. Pure: src/acp/editor-requests.ts calls {@link v2RequestToCore}
 * before its gates, src/acp/server-answers.ts {@link coreResultToV2} before it answers.
 *
 * - `auth/login {methodId}` → `authenticate`, `auth/logout` → `logout`.
 * - `session/resume` without `replayFrom` → `session/resume`; with `{type:"start"}` →
 *   `session/load` (the journal's whole history, replayed); any other cursor → -32602 (v2: an
 *   agent MUST NOT substitute one it does not know).
 * - `session/new` and `session/resume` may omit `mcpServers` (v2); the core's schema wants it.
 * - `session/set_config_option {type, value}`: v1's `value` carries the choice (a boolean
 *   keeps its `type`, an id drops it).
 * - `session/prompt {idempotencyKey}`: the key goes to `_meta["acp-warden/idempotencyKey"]`,
 *   where the host reads v1's (the core's schema would drop an unknown top-level field).
 * - `tool_call/cancel`, `terminal/cancel`: v1 has none; the core takes them by their v2 names
 *   (agent-client-cancel.ts says when they reach the agent).
 * - The rest (`session/new`, `list`, `close`, `delete`, `prompt`) has the same name and shape.
 */
import { RpcError } from '../jsonrpc/rpc-error.js';
import { AGENT_METHODS } from '../protocol/methods.js';
import { V2_AGENT_METHODS } from '../protocol/methods-v2.js';
import { IDEMPOTENCY_KEY_META } from '../protocol/native-agent.js';
import { configOptionToV2 } from './v2-updates.js';
import type { SessionConfigOption } from '@agentclientprotocol/sdk';

/** A request as the core names and shapes it. */
export interface CoreRequest {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/**
 * v2 method names the core knows by another name, or v1 has not (`tool_call/cancel`,
 * `terminal/cancel`: the core names them so): the connection of a v2 endpoint accepts them, a
 * v1 editor gets -32601 for them.
 */
export const v2OnlyMethods: readonly string[] = [V2_AGENT_METHODS.auth_login, V2_AGENT_METHODS.auth_logout, V2_AGENT_METHODS.tool_call_cancel, V2_AGENT_METHODS.terminal_cancel];

/** The core's request for a v2 editor's `method` with `params`, or why it cannot be served. */
export function v2RequestToCore(method: string, params: Record<string, unknown>): CoreRequest | RpcError {
  switch (method) {
    case V2_AGENT_METHODS.auth_login:
      return { method: AGENT_METHODS.authenticate, params };
    case V2_AGENT_METHODS.auth_logout:
      return { method: AGENT_METHODS.logout, params };
    case V2_AGENT_METHODS.session_new:
      return { method, params: withServers(params) };
    case V2_AGENT_METHODS.session_resume: {
      const { replayFrom, ...rest } = params;
      if (replayFrom === undefined || replayFrom === null) return { method: AGENT_METHODS.session_resume, params: withServers(rest) };
      const type = (replayFrom as { type?: unknown }).type;
      if (type === 'start') return { method: AGENT_METHODS.session_load, params: withServers(rest) };
      return RpcError.invalidParams(`unsupported replayFrom ${JSON.stringify(type)}: this agent replays from {"type":"start"} only`);
    }
    case V2_AGENT_METHODS.session_prompt: {
      // v2's idempotency key goes to the host where v1's does (src/host/agent/idempotent-prompts.ts):
      // in `_meta`, which the core's schema keeps (it would drop an unknown top-level field).
      const { idempotencyKey, ...rest } = params;
      if (idempotencyKey === undefined) return { method, params };
      const meta = typeof rest._meta === 'object' && rest._meta !== null ? (rest._meta as Record<string, unknown>) : {};
      return { method, params: { ...rest, _meta: { ...meta, [IDEMPOTENCY_KEY_META]: idempotencyKey } } };
    }
    case V2_AGENT_METHODS.session_set_config_option: {
      const { type, ...rest } = params;
      return { method, params: type === 'boolean' ? params : rest };
    }
    default:
      return { method, params };
  }
}

/** `mcpServers` as the core's schema wants it (v2 may omit it: none). */
function withServers(params: Record<string, unknown>): Record<string, unknown> {
  return params.mcpServers === undefined || params.mcpServers === null ? { ...params, mcpServers: [] } : params;
}

/**
 * The core's answer to `method` (the core's name) as the v2 editor reads it: config options by
 * `configId`, no modes (v2 has none: config options carry them). Other answers pass.
 */
export function coreResultToV2(method: string, result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return result;
  switch (method) {
    case AGENT_METHODS.session_new:
    case AGENT_METHODS.session_load:
    case AGENT_METHODS.session_resume:
    case AGENT_METHODS.session_set_config_option: {
      const { modes: _modes, configOptions, ...rest } = result as { modes?: unknown; configOptions?: SessionConfigOption[] | null } & Record<string, unknown>;
      return Array.isArray(configOptions) ? { ...rest, configOptions: configOptions.map(configOptionToV2) } : rest;
    }
    default:
      return result;
  }
}
