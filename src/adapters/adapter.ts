/**
 * The adapter contract: how a CLI that does not speak ACP becomes an ACP agent.
 *
 * An adapter is two things. A **definition** (plain data and functions): what the agent
 * advertises, where its executable is, how to build the command line and environment for
 * each (re)start of a session's CLI, and how that CLI is supervised. And a **session
 * adapter**: actor logic (a state machine) that runs one ACP session against one CLI
 * process, with every callback of the seed's `ExMCP.ACP.Adapter` turned into an event:
 *
 * - in: the native agent events of that session (`session.prompt`, `session.cancel`,
 *   `session.setMode`, `session.setConfigOption`, `client.response` / `client.error`), the
 *   CLI's lines (`native.message`, `native.nonJson`) and its lifecycle (`port.started`
 *   with the restart count, `port.exited` with the typed exit), and `adapter.start` (answer
 *   the `session/new` it carries once the CLI is ready);
 * - out (emitted): the native agent outputs (`acp.respond`, `acp.error`, `acp.update`,
 *   `acp.clientRequest`, `acp.notify`), `port.write` (a line for the CLI), `port.busy` (arms
 *   the hang watchdog), and `adapter.resume` (what the next start of the CLI needs to resume
 *   the conversation, such as Claude's `--resume <id>`).
 *
 * `createAdapterAgent` (adapter-agent.ts) runs a definition as a native agent: one
 * supervisor per ACP session with the session adapter and its port, so the ACP agent server
 * serves an adapted CLI exactly like a native agent. The seed's shapes map onto it: a
 * persistent CLI per session (Claude Code, Codex app-server); one-shot and adapter-managed
 * processes: a definition without `command` gives its session adapters no port of their
 * own, and they spawn ports as children (one per prompt, or several at once).
 */
import type { AgentCapabilities, AuthMethod, Implementation } from '@agentclientprotocol/sdk';
import type { AnyActorLogic } from 'xstate';
import type { AgentHandlerEvent, AgentHandlerOutput, AgentEventContext } from '../acp/native-agent.js';
import type { EnvironmentInput } from '../port/env-policy.js';
import type { PortExit } from '../port/port-exit.js';
import type { PortInput } from '../port/port.js';
import type { BackoffOptions } from '../supervision/backoff.js';

/** Events a session adapter receives. */
export type SessionAdapterEvent =
  | AgentHandlerEvent
  /** Start the session: answer `requestId` (a `session/new`) with the session's setup once the CLI is ready. */
  | { readonly type: 'adapter.start'; readonly requestId: string; readonly sessionId: string; readonly params: Record<string, unknown>; readonly context: AgentEventContext }
  /** One JSON line from the CLI, parsed once by the port. */
  | { readonly type: 'native.message'; readonly message: unknown }
  /** A line from the CLI that is not JSON. */
  | { readonly type: 'native.nonJson'; readonly preview: string }
  /** The CLI (re)started; `restarts` is 0 the first time. */
  | { readonly type: 'port.started'; readonly pid: number; readonly restarts: number }
  /** The CLI ended; the supervisor decides whether it restarts. */
  | { readonly type: 'port.exited'; readonly exit: PortExit };

/** Events a session adapter emits. */
export type SessionAdapterOutput =
  | AgentHandlerOutput
  /** A message for the CLI (written as one JSON line). */
  | { readonly type: 'port.write'; readonly message: unknown }
  /** Whether a request to the CLI is outstanding (arms the port's hang watchdog). */
  | { readonly type: 'port.busy'; readonly busy: boolean }
  /** What the next start of the CLI needs to resume this conversation. */
  | { readonly type: 'adapter.resume'; readonly state: unknown };

/** Where an agent's executable comes from, in order: `--agent-command`, an environment variable, the PATH. */
export interface ExecutableSpec {
  /** The name looked up on the PATH (`claude`, `codex`). */
  readonly name: string;
  /** An environment variable naming the executable (`CLAUDE_CODE_EXECUTABLE`, `CODEX_PATH`). */
  readonly envVar?: string;
  /** Arguments that print the version (`['--version']`). */
  readonly versionArgs?: readonly string[];
  /** How to install it, for the message when it is missing. */
  readonly install: string;
}

/** What the command line of a session's CLI is built from. */
export interface CommandContext {
  /** The executable, resolved. */
  readonly executable: string;
  /** The session's working directory. */
  readonly cwd: string;
  /** The session's `session/new` params. */
  readonly params: Record<string, unknown>;
  /** The last `adapter.resume` state, or `undefined` at the first start. */
  readonly resume: unknown;
  /** How many times this session's CLI has been restarted. */
  readonly restarts: number;
}

/** A command line and its environment. */
export interface CommandLine {
  readonly args: readonly string[];
  readonly env: EnvironmentInput;
}

/** An adapter: how to run a CLI as an ACP agent. */
export interface AdapterDefinition {
  /** The agent name on the command line (`claude`). */
  readonly name: string;
  readonly agentInfo: Implementation;
  readonly capabilities: AgentCapabilities;
  readonly authMethods?: AuthMethod[];
  readonly executable: ExecutableSpec;
  /** The session adapter: one per ACP session. */
  readonly session: AnyActorLogic;
  /**
   * The command line and environment of each (re)start of a session's CLI. Without it, a
   * session has no port of its own (the adapter manages its processes).
   */
  readonly command?: (context: CommandContext) => CommandLine;
  /** Port options (watchdog, shutdown sequence, line limit). */
  readonly port?: Partial<Omit<PortInput, 'command' | 'args' | 'cwd' | 'env'>>;
  /** Restarts of a session's CLI: at most `intensity` in `period` ms, with backoff. */
  readonly restart?: { readonly intensity?: number; readonly period?: number; readonly backoff?: BackoffOptions };
}
