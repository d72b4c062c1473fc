/**
 * An agent server's gates on what the editor asks, before the handler sees anything: the
 * methods its connection accepts, the params' schemas, the agent's capabilities, known sessions,
 * prompt content and MCP transports.
 */
import { V2_AGENT_METHODS, V2_PROTOCOL_VERSION } from '../protocol/methods-v2.js';
import { v2OnlyMethods } from './v2-requests.js';
import type { AgentCapabilities } from '@agentclientprotocol/sdk';
import { type MethodTable, type ParamsParser } from '../jsonrpc/connection.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { AGENT_METHODS, agentNotifications, agentRequests, UNSTABLE_AGENT_METHODS, unstableAgentRequests } from '../protocol/methods.js';
import { parserOf } from './schemas.js';
import { advertisesFork, missingAgentCapability, sessionSetupRefusal, unadvertisedContent } from './capability-gate.js';
import { type NativeAgent } from '../protocol/native-agent.js';
import { type Live } from './server-live.js';

/** Validators of the params of every agent method, stable and unstable. */
export const paramsParsers: Record<string, ParamsParser> = {
  ...Object.fromEntries(Object.entries(agentRequests).map(([method, types]) => [method, parserOf(types.params)])),
  [UNSTABLE_AGENT_METHODS.session_fork]: parserOf(unstableAgentRequests[UNSTABLE_AGENT_METHODS.session_fork].params, 'unstable'),
};

/**
 * The methods the connection accepts (others: -32601). Params are validated by the server
 * itself, after the initialize check, so that a request before `initialize` gets -32600
 * whatever its params (as the SDK answers).
 */
export function methodTable(agent: NativeAgent): MethodTable {
  const requests: Record<string, ParamsParser | true> = {};
  for (const method of Object.keys(agentRequests)) requests[method] = true;
  for (const method of agent.extensions?.requests ?? []) requests[method] = true;
  // An agent that speaks v2 to its editors takes v2's own names too (mapped in v2-requests.ts).
  if (agent.protocolVersions?.includes(V2_PROTOCOL_VERSION)) for (const method of v2OnlyMethods) requests[method] = true;
  // A delegated initialize learns the capabilities later: `gate` refuses fork when they lack it.
  if (advertisesFork(agent.capabilities) || agent.delegateInitialize) requests[UNSTABLE_AGENT_METHODS.session_fork] = true;
  const notifications: Record<string, ParamsParser | true> = {};
  for (const [method, type] of Object.entries(agentNotifications)) notifications[method] = parserOf(type);
  for (const method of agent.extensions?.notifications ?? []) notifications[method] = true;
  return { requests, notifications };
}

/** The protocol's gates, before the handler sees anything. `undefined` lets the request through. */
export function gate(live: Live, method: string, params: Record<string, unknown>): RpcError | undefined {
  const caps = live.capabilities;
  if (missingAgentCapability(caps, method)) return RpcError.methodNotFound(method);
  switch (method) {
    case AGENT_METHODS.authenticate: {
      const methods = live.authMethods.filter((entry) => (entry as { type?: string }).type !== 'terminal');
      if (methods.length === 0) return RpcError.methodNotFound(method);
      if (!methods.some((entry) => entry.id === params.methodId)) return RpcError.invalidParams(`unknown auth method ${JSON.stringify(params.methodId)}`);
      return undefined;
    }
    case AGENT_METHODS.session_new:
    case AGENT_METHODS.session_load:
    case AGENT_METHODS.session_resume:
      return sessionSetupGate(live, params);
    case AGENT_METHODS.session_close:
    case V2_AGENT_METHODS.tool_call_cancel:
    case V2_AGENT_METHODS.terminal_cancel:
      return knownSession(live, params);
    case UNSTABLE_AGENT_METHODS.session_fork:
      return knownSession(live, params) ?? sessionSetupGate(live, params);
    case AGENT_METHODS.session_set_mode: {
      const unknown = knownSession(live, params);
      if (unknown) return unknown;
      return live.sessions.get(params.sessionId as string)?.hasModes ? undefined : RpcError.invalidParams('this session has no modes');
    }
    case AGENT_METHODS.session_set_config_option: {
      const unknown = knownSession(live, params);
      if (unknown) return unknown;
      return live.sessions.get(params.sessionId as string)?.hasConfigOptions ? undefined : RpcError.invalidParams('this session has no config options');
    }
    case AGENT_METHODS.session_prompt: {
      const unknown = knownSession(live, params);
      if (unknown) return unknown;
      return promptContentGate(caps, params.prompt as Array<{ type: string }>);
    }
    default:
      return undefined; // extensions the agent declared
  }
}

function knownSession(live: Live, params: Record<string, unknown>): RpcError | undefined {
  const sessionId = params.sessionId as string;
  const session = live.sessions.get(sessionId);
  return session ? undefined : RpcError.resourceNotFound(`session ${sessionId}`, { sessionId });
}

function sessionSetupGate(live: Live, params: Record<string, unknown>): RpcError | undefined {
  const refusal = sessionSetupRefusal(live.capabilities, params);
  switch (refusal?.kind) {
    case undefined:
      return undefined;
    case 'cwd_not_absolute':
      return RpcError.invalidParams(`cwd must be an absolute path, got ${JSON.stringify(refusal.cwd)}`);
    case 'additional_directories':
      return RpcError.invalidParams('additionalDirectories is not supported by this agent');
    case 'mcp_transport':
      return RpcError.invalidParams(`${refusal.transport.toUpperCase()} MCP servers are not supported by this agent`);
  }
}

function promptContentGate(caps: AgentCapabilities, prompt: Array<{ type: string }>): RpcError | undefined {
  const type = unadvertisedContent(caps, prompt);
  if (!type) return undefined;
  return RpcError.invalidParams(type === 'resource' ? 'embedded resources are not supported by this agent' : `${type} content is not supported by this agent`);
}
