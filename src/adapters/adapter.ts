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
 *   the `session/new`, `session/resume` or `session/load` it carries with the session's
 *   setup once the CLI is ready; it may carry a resume state, and it may come again for a
 *   session that is running, to be answered at once);
 * - out (emitted): the native agent outputs (`acp.respond`, `acp.error`, `acp.update`,
 *   `acp.clientRequest`, `acp.notify`), `port.write` (a line for the CLI), `port.busy` (the
 *   agent owes output, a tool runs: the hang watchdog's facts), `adapter.resume` (what the next start of the CLI needs to resume
 *   the conversation, such as Claude's `--resume <id>`), and `adapter.ready` (the CLI is
 *   initialized and the conversation resumed, after its first start and after every
 *   restart).
 *
 * `createAdapterAgent` (adapter-agent.ts) runs a definition as a native agent: one
 * supervisor per ACP session with the session adapter and its port, so the ACP agent server
 * serves an adapted CLI exactly like a native agent. A definition with `ownsPort` gets the
 * port in `port.started` and its session adapter reads and writes it itself (port-link.ts);
 * otherwise the adapter agent relays the lines and the writes. A CLI with a protocol of its
 * own is best built with `fromCliSession` (cli-session.ts): its handshake and mapping on a
 * shared skeleton, which owns its port and tells the watchdog what the agent owes. The seed's shapes map onto it: a
 * persistent CLI per session (Claude Code, Codex app-server); one-shot and adapter-managed
 * processes: a definition without `command` gives its session adapters no port of their
 * own, and they spawn ports as children (one per prompt, or several at once).
 */
import type { AgentCapabilities, AuthMethod, Implementation } from '@agentclientprotocol/sdk';
import type { AnyActorLogic, AnyActorRef } from 'xstate';
import type { AgentHandlerEvent, AgentHandlerOutput, AgentEventContext } from '../protocol/native-agent.js';
import type { EnvironmentInput } from '../port/env-policy.js';
import type { PortExit } from '../port/port-exit.js';
import type { PortInput } from '../port/port.js';
import type { BackoffOptions } from '../supervision/backoff.js';
import type { ResumeCheck } from './resume-check.js';

/** Events a session adapter receives. */
export type SessionAdapterEvent =
  | AgentHandlerEvent
  /**
   * Start the session: answer `requestId` (a `session/new`, `session/resume` or
   * `session/load`) with the session's setup (`sessionId`, `modes`, `configOptions`) once the
   * CLI is ready; for resume and load, the adapter agent drops `sessionId` from the answer.
   * `resume` is the state a `session/resume` or `session/load` brought from the host's
   * journal (what this adapter once emitted as `adapter.resume`): seed the context with it,
   * so that the first handshake already resumes the conversation. The same event may come
   * again while the session runs (the editor resumed a session that is live): answer it
   * with the current setup, at once if the CLI is ready.
   */
  | {
      readonly type: 'adapter.start';
      readonly requestId: string;
      readonly sessionId: string;
      readonly params: Record<string, unknown>;
      readonly context: AgentEventContext;
      readonly resume?: unknown;
    }
  /** One JSON line from the CLI, parsed once by the port. */
  | { readonly type: 'native.message'; readonly message: unknown }
  /** A line from the CLI that is not JSON. */
  | { readonly type: 'native.nonJson'; readonly preview: string }
  /**
   * A line from the CLI over the port's line limit, skipped unread (the CLI goes on):
   * `head` is its first bytes (up to 4 KiB), to tell what was lost (a tool result, a
   * result, an answer to a request) and act on it so that the turn can still end.
   */
  | { readonly type: 'native.oversize'; readonly bytes: number; readonly limit: number; readonly head: string }
  /**
   * The CLI (re)started; `restarts` is 0 the first time. For a definition with `ownsPort`,
   * `port` is the new port: the session adapter binds to it (reads its events, writes to it)
   * and the adapter agent relays nothing between them.
   */
  | { readonly type: 'port.started'; readonly pid: number; readonly restarts: number; readonly port?: AnyActorRef }
  /** The CLI ended; the supervisor decides whether it restarts. */
  | { readonly type: 'port.exited'; readonly exit: PortExit };

/** Events a session adapter emits. */
export type SessionAdapterOutput =
  | AgentHandlerOutput
  /** A message for the CLI (written as one JSON line). */
  | { readonly type: 'port.write'; readonly message: unknown }
  /**
   * Whether the agent owes output (a request to the CLI is outstanding and it waits for
   * nobody: arms the port's hang watchdog), and whether one of its tool calls runs (the
   * watchdog's longer `toolIdleMs` applies), and whether a turn is open (`turnOpen`, omitted:
   * as `busy`: a CLI over its soft memory limit is recycled once none is). Sessions built with
   * `fromCliSession` emit it from their context; see src/port/watchdog.ts.
   */
  | { readonly type: 'port.busy'; readonly busy: boolean; readonly toolRunning?: boolean; readonly turnOpen?: boolean }
  /** What the next start of the CLI needs to resume this conversation. */
  | { readonly type: 'adapter.resume'; readonly state: unknown }
  /**
   * The CLI is initialized (and, after a restart, the conversation resumed): the session
   * takes prompts. Emitted after every handshake, with the `restarts` of `port.started`;
   * the adapter agent reports one with `restarts > 0` as `session.recovered`.
   */
  | { readonly type: 'adapter.ready'; readonly restarts: number };

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
  /** The session's `session/new` (or `session/resume`, `session/load`) params. */
  readonly params: Record<string, unknown>;
  /**
   * The last `adapter.resume` state: `undefined` at the first start of a new session, the
   * journaled state at the first start of a resumed or loaded one.
   */
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
   * The session adapter reads from and writes to its own port (as `fromCliSession`'s do):
   * `port.started` carries the port, and the adapter agent relays neither the port's lines
   * nor the adapter's `port.write` / `port.busy`. Default: the adapter agent relays them.
   */
  readonly ownsPort?: boolean;
  /**
   * The command line and environment of each (re)start of a session's CLI. Without it, a
   * session has no port of its own (the adapter manages its processes).
   */
  readonly command?: (context: CommandContext) => CommandLine;
  /**
   * Checks a resume state that comes from outside (`session/resume` or `session/load` of a
   * session this process does not run: the editor's `_meta["acp-warden/resume"]`, the
   * host's journal). A failed check answers -32602 naming the field, and nothing is
   * started. Ids that reach a command line must be checked here (resume-check.ts).
   */
  readonly checkResume?: (state: unknown) => ResumeCheck;
  /**
   * Port options (watchdog, shutdown sequence, line limit). A session's CLI runs with
   * `oversize: 'skip'` unless this says otherwise: a line over the limit is skipped and
   * reported as `native.oversize`, the CLI is not killed.
   */
  readonly port?: Partial<Omit<PortInput, 'command' | 'args' | 'cwd' | 'env'>>;
  /** Restarts of a session's CLI: at most `intensity` in `period` ms, with backoff. */
  readonly restart?: { readonly intensity?: number; readonly period?: number; readonly backoff?: BackoffOptions };
}
