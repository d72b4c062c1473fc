/**
 * The capability gate of both ACP roles, decided once. An ACP method or content a peer did not
 * advertise is refused before it is sent or served: the agent server (towards the editor)
 * refuses the editor's calls of agent methods the agent did not advertise and the agent's
 * requests to an editor that lacks the client capability; the agent client (towards an agent)
 * refuses the same calls locally, and the agent's requests for what it did not advertise
 * itself. These functions say what is missing; each side words its own refusal (its code,
 * message and data are part of its documented behaviour).
 */
import type { AgentCapabilities, ClientCapabilities } from '@agentclientprotocol/sdk';
import { isAbsolute } from 'node:path';
import { AGENT_METHODS, CLIENT_METHODS, UNSTABLE_AGENT_METHODS } from '../protocol/methods.js';

/** An agent capability an optional agent method needs: how ACP names it, and whether `caps` has it. */
interface AgentMethodCapability {
  /** Its path in `agentCapabilities` (`sessionCapabilities.resume`). */
  readonly path: string;
  /** Unstable in ACP (absent from the SDK's stable types, present on the wire). */
  readonly unstable?: true;
  readonly advertised: (caps: AgentCapabilities) => boolean;
}

const present = (value: unknown) => value !== undefined && value !== null;

/** The optional agent methods and what each needs; the others (initialize, session/new, session/prompt, …) need nothing. */
const agentMethodCapabilities: Readonly<Record<string, AgentMethodCapability>> = {
  [AGENT_METHODS.logout]: { path: 'auth.logout', advertised: (caps) => Boolean(caps.auth?.logout) },
  [AGENT_METHODS.session_load]: { path: 'loadSession', advertised: (caps) => Boolean(caps.loadSession) },
  [AGENT_METHODS.session_list]: { path: 'sessionCapabilities.list', advertised: (caps) => Boolean(caps.sessionCapabilities?.list) },
  [AGENT_METHODS.session_resume]: { path: 'sessionCapabilities.resume', advertised: (caps) => Boolean(caps.sessionCapabilities?.resume) },
  [AGENT_METHODS.session_close]: { path: 'sessionCapabilities.close', advertised: (caps) => Boolean(caps.sessionCapabilities?.close) },
  [AGENT_METHODS.session_delete]: { path: 'sessionCapabilities.delete', advertised: (caps) => Boolean(caps.sessionCapabilities?.delete) },
  [UNSTABLE_AGENT_METHODS.session_fork]: { path: 'sessionCapabilities.fork', unstable: true, advertised: advertisesFork },
};

/** Whether `sessionCapabilities.fork` is advertised (it is unstable: absent from the stable types, present on the wire). */
export function advertisesFork(caps: AgentCapabilities | undefined): boolean {
  return present((caps?.sessionCapabilities as { fork?: unknown } | undefined)?.fork);
}

/**
 * The agent capability that calling `method` needs and `caps` lacks, or `undefined` when the
 * method may be called (it needs none, or it is advertised).
 */
export function missingAgentCapability(caps: AgentCapabilities, method: string): { readonly path: string; readonly unstable: boolean } | undefined {
  const needed = Object.hasOwn(agentMethodCapabilities, method) ? agentMethodCapabilities[method] : undefined;
  if (!needed || needed.advertised(caps)) return undefined;
  return { path: needed.path, unstable: needed.unstable === true };
}

/** What makes a session setup (`session/new`, `load`, `resume`, `fork`) one the agent cannot take. */
export type SessionSetupRefusal =
  /** ACP: paths in payloads MUST be absolute. */
  | { readonly kind: 'cwd_not_absolute'; readonly cwd: unknown }
  /** `additionalDirectories` given, `sessionCapabilities.additionalDirectories` not advertised. */
  | { readonly kind: 'additional_directories' }
  /** An MCP server over a transport the agent did not advertise (`mcpCapabilities`). */
  | { readonly kind: 'mcp_transport'; readonly transport: 'http' | 'sse' };

/** The first reason `params` of a session setup cannot go to an agent with `caps`, or `undefined`. */
export function sessionSetupRefusal(caps: AgentCapabilities, params: { readonly cwd?: unknown; readonly additionalDirectories?: unknown; readonly mcpServers?: unknown }): SessionSetupRefusal | undefined {
  if (typeof params.cwd !== 'string' || !isAbsolute(params.cwd)) return { kind: 'cwd_not_absolute', cwd: params.cwd };
  const directories = params.additionalDirectories as unknown[] | null | undefined;
  if (directories && directories.length > 0 && !caps.sessionCapabilities?.additionalDirectories) return { kind: 'additional_directories' };
  for (const server of (params.mcpServers as Array<{ type?: string } | null> | undefined) ?? []) {
    if (server?.type === 'http' && !caps.mcpCapabilities?.http) return { kind: 'mcp_transport', transport: 'http' };
    if (server?.type === 'sse' && !caps.mcpCapabilities?.sse) return { kind: 'mcp_transport', transport: 'sse' };
  }
  return undefined;
}

/** The first prompt content type the agent did not advertise (ACP: text and resource links are always allowed), or `undefined`. */
export function unadvertisedContent(caps: AgentCapabilities, content: readonly unknown[] | undefined): 'image' | 'audio' | 'resource' | undefined {
  const allowed = caps.promptCapabilities ?? {};
  for (const block of content ?? []) {
    const type = (block as { type?: string } | null)?.type;
    if (type === 'image' && !allowed.image) return type;
    if (type === 'audio' && !allowed.audio) return type;
    if (type === 'resource' && !allowed.embeddedContext) return type;
  }
  return undefined;
}

/** Whether a client with `caps` takes the agent → client request `method` (extensions, `_…`, always go through). */
export function clientAllows(caps: ClientCapabilities, method: string, params: unknown): boolean {
  switch (method) {
    case CLIENT_METHODS.session_request_permission:
      return true;
    case CLIENT_METHODS.fs_read_text_file:
      return caps.fs?.readTextFile === true;
    case CLIENT_METHODS.fs_write_text_file:
      return caps.fs?.writeTextFile === true;
    case CLIENT_METHODS.terminal_create:
    case CLIENT_METHODS.terminal_output:
    case CLIENT_METHODS.terminal_wait_for_exit:
    case CLIENT_METHODS.terminal_kill:
    case CLIENT_METHODS.terminal_release:
      return caps.terminal === true;
    case CLIENT_METHODS.elicitation_create: {
      const mode = (params as { mode?: string } | undefined)?.mode;
      return mode === 'url' ? present(caps.elicitation?.url) : present(caps.elicitation?.form);
    }
    default:
      return method.startsWith('_');
  }
}
