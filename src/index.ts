/**
 * acp-warden's public API: what a program needs to embed the host, write an adapter, or
 * compose supervisors of its own. At most 80 names (spec/api/public-api.spec.ts counts them).
 *
 * - Host: {@link createHost} gives a program what `warden acp` gives an editor: sessions on
 *   any known agent, prompts as async iterables of updates, events, a graceful stop.
 * - Journal: the {@link Journal} interface sessions are listed, replayed and resumed from,
 *   and its SQLite engine {@link sqliteJournal}.
 * - Agents and the adapter contract: {@link createAdapterAgent} runs an
 *   {@link AdapterDefinition} (a CLI that does not speak ACP) as a {@link NativeAgent};
 *   {@link createAcpPassthrough} runs a native ACP agent; {@link demoAgent} is the built-in one.
 * - Supervision: OTP supervisors as XState v5 actor logic ({@link createSupervisor},
 *   {@link createDynamicSupervisor}), child specs, strategies, restart intensity (`intensity`
 *   restarts in `period` ms), exit reasons, the commands and introspection. Supervisors keep
 *   time with their actor system's clock: run them under XState's `SimulatedClock`
 *   (`createActor(logic, { clock })`) to test intensity and backoff without waiting.
 *
 * Internals live behind subpath exports, for tools and tests that need them:
 * `acp-warden/supervision`, `acp-warden/port` (ports, framing, write queues, the reaper),
 * `acp-warden/jsonrpc` (connections, transports, messages), `acp-warden/acp` (the ACP agent
 * server and client sides), `acp-warden/adapters` (the registry, Claude Code and Codex),
 * `acp-warden/host` (the host agent, the session machine) and `acp-warden/inspect` (the
 * inspector, the live view, state charts). See docs/embedding.md.
 *
 * @packageDocumentation
 */

// The host: sessions, prompts, events.
export {
  createHost,
  type Host,
  type HostOptions,
  type HostEvent,
  type HostSessionHandle,
  type HostPromptRun,
  type HostTreeNode,
  type ServeOptions,
  type ServeHub,
} from './runtime/host.js';
export type { SessionStateName } from './session/session-machine.js';
export type { HostLogEntry, LogLevel } from './host/host-log.js';

// The journal.
export {
  InvalidCursorError,
  JournalError,
  SessionOwnedError,
  UnknownSessionError,
  type Journal,
  type JournalEntry,
  type JournalRecord,
  type JournalPageQuery,
  type JournalSession,
  type JournalSessionPage,
  type JournalSessionState,
  type SessionOwner,
} from './journal/journal.js';
export { sqliteJournal, defaultJournalPath, type SqliteJournalOptions } from './journal/sqlite-journal.js';

// Errors a prompt or a request rejects with, and the permission policy warden uses itself.
export { RpcError } from './jsonrpc/rpc-error.js';
export { ErrorCodes } from './jsonrpc/error-codes.js';
export { allowOnce } from './acp/permission-choice.js';

// Agents, and the contract for writing an adapter.
export type { NativeAgent, AgentRequestEvent } from './protocol/native-agent.js';
export { demoAgent } from './acp/demo-agent.js';
export { createAdapterAgent, type AdapterAgentOptions } from './adapters/adapter-agent.js';
export { createAcpPassthrough, type AcpPassthroughOptions } from './adapters/acp-passthrough.js';
export type { AdapterDefinition, SessionAdapterEvent, SessionAdapterOutput, ExecutableSpec, CommandContext, CommandLine } from './adapters/adapter.js';

// Supervision: supervisors, child specs, strategies and intensity, commands, introspection, exits.
export { createSupervisor, type SupervisorLogic, type SupervisorOptions, type SupervisorSnapshot } from './supervision/supervisor.js';
export { createDynamicSupervisor, type DynamicSupervisorOptions } from './supervision/dynamic-supervisor.js';
export type { ChildSpec, ChildStart, ChildStartContext, ChildType, RestartType, Shutdown } from './supervision/child-spec.js';
export type { Strategy, AutoShutdown, SupervisorFlags } from './supervision/supervisor-flags.js';
export type { BackoffOptions } from './supervision/backoff.js';
export { SupervisorSpecError } from './supervision/spec-error.js';
export { startChild, startTemplateChild, terminateChild, restartChild, deleteChild, shutdown } from './supervision/commands.js';
export { whichChildren, countChildren, supervisionTree, type ChildInfo, type ChildCounts, type SupervisionTreeNode } from './supervision/introspection.js';
export { SHUTDOWN_EVENT, type SupervisionEvent } from './supervision/events.js';
export { normalExit, shutdownExit, errorExit, killedExit, describeExit, type ExitReason } from './supervision/exit-reason.js';
