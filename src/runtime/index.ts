/**
 * The `acp-warden/host` subpath: createHost and its hub (the composition, runtime/), the host
 * agent and session machine behind it, the journal contract and its stores. Served from
 * runtime/, the top of the layers (docs/architecture.md, "Layers"), so it may gather them all.
 */
export { createHost, stopServers, type Host, type HostEvent, type HostOptions, type HostPromptRun, type HostSessionHandle, type HostTreeNode, type ServeOptions, type ServeHub, type HostHubOptions } from './host.js';
export { connectionHubLogic, AFTER_META_KEY, HUB_METHODS, type HubOptions, type HubSessionInfo, type HubContext } from '../serve/connection-hub.js';
export type { UnattendedPolicy } from '../serve/unattended-policy.js';
export {
  createHostAgent,
  hostAgentLogic,
  innerAgentsOf,
  sessionMachinesOf,
  AGENT_META_KEY,
  type HostAgentOptions,
  type HostAgentContext,
  type HostSessionEvent,
} from '../host/host-agent.js';
export { sessionMachine, type SessionMachineContext, type SessionMachineEvent, type SessionMachineInput, type SessionOwnership, type SessionStateName } from '../session/session-machine.js';
export {
  titleOf,
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
} from '../journal/journal.js';
export { sqliteJournal, defaultJournalPath, type SqliteJournalOptions } from '../journal/sqlite-journal.js';
export { logEntryOf, jsonReplacer, atLeast, logLevels, type HostLogEntry, type LogLevel } from '../host/host-log.js';
export { FencedAppendError, type AsyncJournal, type CurrentOwner, type JournalUpdateEntry, type PreviousOwner, type SessionClaim } from '../journal/async-journal.js';
export { asyncJournalOf } from '../journal/async-journal-of.js';
export type { HostStore } from '../journal/host-journal.js';
export type { PostgresJournalOptions, PostgresJournal } from '../journal/postgres-journal.js';
export { delayedJournal, parseJournalDelay, type JournalDelay } from '../journal/delayed-journal.js';
