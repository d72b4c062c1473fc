/**
 * What a program sees of a host (`createHost`, host.ts): its options, the running host, its
 * sessions and prompts, its tree. The embedding API's types, apart from the code that makes them.
 */
import type { ContentBlock, PromptResponse, RequestPermissionRequest, RequestPermissionResponse, SessionUpdate } from '@agentclientprotocol/sdk';
import type { AnyActorRef, InspectionEvent, Observer } from 'xstate';
import type { TerminalLimits } from '../acp/terminals.js';
import type { FileReadOptions } from '../acp/workspace-fs.js';
import type { AgentOptions } from '../adapters/agent-factory.js';
import type { HostEvent } from '../host/host-event.js';
import type { HostLogEntry } from '../host/host-log.js';
import type { AsyncJournal } from '../journal/async-journal.js';
import type { JournalDelay } from '../journal/delayed-journal.js';
import type { HostStore } from '../journal/host-journal.js';
import type { Journal } from '../journal/journal.js';
import type { PostgresJournalOptions } from '../journal/postgres-journal.js';
import type { Transport } from '../jsonrpc/transport.js';
import type { NativeAgent } from '../protocol/native-agent.js';
import type { HostHubOptions, ServeHub } from '../serve/serve-hub.js';
import type { SupervisionTreeNode } from '../supervision/introspection.js';
import type { SupervisionOptions } from '../adapters/agent-settings.js';
import type { HostTelemetry } from '../telemetry/host-telemetry.js';

/** Options of `createHost` (host.ts). */
export interface HostOptions {
  /**
   * Agents by name, in addition to the known ones (`claude`, `codex`, `gemini`, …, `demo`,
   * `acp:<command line>`): a name here wins over a known agent of the same name.
   */
  readonly agents?: Readonly<Record<string, NativeAgent>>;
  /** The agent of sessions that do not name one. Default `demo`. */
  readonly defaultAgent?: string;
  /** How known agents are found and run: `--agent-command`, `--env`, `--inherit-env`. */
  readonly agentOptions?: AgentOptions;
  /**
   * The journal: a SQLite path, `:memory:`, a PostgreSQL URL (`postgres://user@host:port/db`:
   * the store several hosts share, docs/cluster.md), or a {@link Journal} (or
   * {@link AsyncJournal}) of your own. Default: the SQLite file under the user's state
   * directory (`defaultJournalPath()`). A PostgreSQL store opens in the background: await
   * {@link Host.opened} to fail early; until then every call waits for it.
   */
  readonly store?: string | Journal | AsyncJournal;
  /** Options of a PostgreSQL store (`lease`, `advertise`, `connections`: see `openPostgresJournal`). */
  readonly postgres?: PostgresJournalOptions;
  /**
   * Timing faults for tests and chaos runs: every journal call delayed by a seeded random time
   * up to `maxMs` (reads answered late, possibly stale; commits acknowledged late), see
   * `delayedJournal`. A SQLite store then runs as an asynchronous journal. Never for production.
   * The CLI reads it from `WARDEN_FAULT_JOURNAL_DELAY=SEED:MAX_MS`.
   */
  readonly journalDelay?: JournalDelay;
  /**
   * A store that answers with promises (PostgreSQL): the most bytes of entries the host holds
   * before the journal acknowledged them; past it the host stops reading its agents' output until
   * the journal caught up to half (a slow or restarting database costs no memory). Default 8 MiB.
   */
  readonly maxPendingWriteBytes?: number;
  /**
   * How known agents' processes are supervised: at most `intensity` restarts in `period` ms
   * per session (default 3 in 60 s), and `hangAfterMs`, the watchdog's patience with a
   * silent agent working on a prompt (default: none; `toolHangAfterMs` while a tool runs,
   * default 30 min), over `agentOptions`' own. Your own `agents` bring their own.
   */
  readonly supervision?: SupervisionOptions;
  /**
   * Agents whose own sessions `listSessions` shows after the journal's (say `['codex']`: its
   * threads, even those started outside warden), besides the default agent and the agents
   * in use; only agents that can list (Codex) are asked.
   */
  readonly listAgents?: readonly string[];
  /**
   * The XState inspector: a `ws://` URL (every actor of the host is sent there, payloads
   * made safe: errors with their stack, secrets redacted, large values cut; see
   * src/inspect/inspector.ts), or your own inspection observer.
   */
  readonly inspect?: string | Observer<InspectionEvent>;
  /**
   * Receives every event as a log entry with a level (`debug` routine facts, `info`
   * recoveries, `warn` restarts and dropped messages, `error` failures): filter as you like,
   * or use `createLogSink` for JSON or pretty lines.
   */
  readonly logger?: (entry: HostLogEntry) => void;
  /**
   * Bounds on the terminals agents run through the program's client: `maxOutputByteLimit`
   * (default 16 MiB; a larger `outputByteLimit` is lowered to it) and `maxPerSession`
   * (default 32 held at once; past it `terminal/create` is refused with -32600). A bad value
   * throws a TypeError from `createHost`.
   */
  readonly terminals?: TerminalLimits;
  /**
   * How agents read files through the program's client: `maxReadBytes` (default 64 MiB) is
   * the most one `fs/read_text_file` answers; a larger file, or a `line`/`limit` range that
   * comes to more, is refused with -32602 naming it (ranges are streamed: a range of a larger
   * file is fine). A file with more than one name (a hard link) is refused with -32602, its
   * other names may be outside the workspace, unless it is a file of a package store named in
   * `linkStores` (say the directory `pnpm store path` prints, for pnpm's `node_modules`). A
   * bad value throws a TypeError from `createHost`.
   */
  readonly files?: FileReadOptions;
  /**
   * OpenTelemetry traces and metrics of this host: what `startTelemetry()` of
   * `acp-warden/telemetry` resolves to (docs/observability.md). Every connection the host
   * serves is observed (the program's own sessions, `host.serve`, each client of `host.hub`,
   * named by its `peer`), the journal's writes are timed, the host's events heard. Default:
   * none (no OpenTelemetry module is loaded). The program shuts it down after `host.stop()`.
   */
  readonly telemetry?: HostTelemetry | undefined;
  /** The program's permission policy; default: reject (nothing runs without a policy that says so). */
  readonly permission?: (request: RequestPermissionRequest) => RequestPermissionResponse['outcome'] | Promise<RequestPermissionResponse['outcome']>;
}


/** A prompt in flight. */
export interface HostPromptRun extends AsyncIterable<SessionUpdate> {
  /**
   * The stop reason; rejects with an `RpcError` naming a crash, a failed session, a refusal.
   * A prompt sent with an `idempotencyKey` has `_meta["acp-warden/promptSeq"]`: the journal seq
   * of its prompt entry, the same for every retry of the key (ACP v2's `messageId` is `user-` and it).
   */
  readonly result: Promise<PromptResponse>;
  /** Ends this prompt with `cancelled`. */
  cancel(): void;
}

/** One session of a host. */
export interface HostSessionHandle {
  readonly sessionId: string;
  readonly agent: string;
  /**
   * Sends a prompt: iterate the result for its updates, await `.result` for its stop reason.
   * Prompts sent before the previous one ended wait their turn (FIFO).
   */
  prompt(
    content: string | readonly ContentBlock[],
    options?: {
      /** Aborting it cancels the prompt (it ends `cancelled`). */
      readonly signal?: AbortSignal;
      /**
       * The prompt's idempotency key (1 to 255 characters, scoped to the session): a retry with
       * the same key and content, in this program or after its restart on the same store (or on
       * another host of a shared one), is inserted at most once and gets the original's outcome;
       * the same key with other content rejects `-32602` (`data.reason: "idempotency_key_reused"`).
       * docs/acp.md, "Idempotent prompts".
       */
      readonly idempotencyKey?: string;
    },
  ): HostPromptRun;
  /** Cancels the prompt in progress (it ends `cancelled`). */
  cancel(): void;
  /** Where the session stands: `ready`, `prompting`, `awaitingPermission`, `recovering`, … */
  state(): string;
  /** Closes the session: its agent process stops, the journal keeps its history. */
  close(): Promise<void>;
}

/** A running host. */
export interface Host {
  /** A new session on `agent` (default: the host's default agent) in `cwd` (absolute). */
  newSession(options: { readonly cwd: string; readonly agent?: string; readonly mcpServers?: unknown[] }): Promise<HostSessionHandle>;
  /**
   * A journaled session, running again: `load` replays its history into `replayed` first;
   * `resume` (default) does not. Works after a restart of the program.
   */
  openSession(sessionId: string, options?: { readonly cwd?: string; readonly how?: 'load' | 'resume' }): Promise<HostSessionHandle & { readonly replayed: readonly SessionUpdate[] }>;
  /** Journaled sessions, most recent first. */
  listSessions(query?: { readonly cwd?: string }): Promise<ReadonlyArray<{ sessionId: string; cwd: string; title: string | null; updatedAt: string }>>;
  /**
   * The journal (read it, or close it yourself when you passed your own): a {@link Journal}
   * for a SQLite store (answers at once), an {@link AsyncJournal} for a PostgreSQL one
   * (answers with promises). `await` works on both.
   */
  readonly journal: HostStore;
  /**
   * Resolves once the store is open (at once for SQLite, whose bad path throws from
   * `createHost`); rejects with the open's error (a PostgreSQL store that cannot be reached
   * or migrated, named without its password). `warden acp` and `warden serve` await it
   * before they answer or listen.
   */
  readonly opened: Promise<void>;
  /** The supervision tree now: every agent, session supervisor, port (with pids) and session state. */
  tree(): HostTreeNode;
  /**
   * The agent processes running now: each port with its agent, its OS pid and the port
   * actor (send it `port.injectLine` to inject a fault, as `warden chaos` does).
   */
  processes(): ReadonlyArray<{ readonly agent: string; readonly pid: number; readonly port: AnyActorRef }>;
  /** Listens to session and supervision events; returns the unsubscribe function. */
  on(listener: (event: HostEvent) => void): () => void;
  /** Looking at the host while it runs. */
  readonly inspect: {
    /**
     * Serves the live view of this host on 127.0.0.1 (`port` 0, the default: a free one): a
     * page with the supervision tree (status, restarts, pids, uptime), each session's state on
     * its chart, the pending requests and a timeline of starts, exits, restarts and
     * escalations, updated as it happens. Rejects with the listen error (`EADDRINUSE`) when
     * the port is taken. `host.stop()` closes it too.
     *
     * @example
     * ```ts
     * const view = await host.inspect.serve({ port: 8081 });
     * console.error(`live view: ${view.url}`);
     * await view.close();
     * ```
     */
    serve(options?: { readonly port?: number }): Promise<{ readonly url: string; readonly port: number; close(): Promise<void> }>;
  };
  /**
   * Serves the host to an editor over `transport` (what `warden acp` does on stdio). When the
   * editor's input ends but it still reads (EOF on stdin), what it asked is served and answered
   * first, for at most `options.drainTimeoutMs` (default 30 s) before running turns are cancelled.
   */
  serve(transport: Transport, options?: ServeOptions): AnyActorRef;
  /**
   * The host as a daemon (`warden serve`): ONE host agent whose sessions outlive every
   * connection, served to any number of connections that come and go (src/serve/connection-hub.ts:
   * cursors per connection, one controller and observers per session, detach and re-attach).
   * Made on first call (later calls return the same hub; `options` count only then).
   *
   * @example
   * ```ts
   * const hub = host.hub({ idleTimeoutMs: 600_000 });
   * wss.on('connection', (socket) => hub.attach(webSocketTransport(socket)));
   * ```
   */
  hub(options?: HostHubOptions): ServeHub;
  /**
   * Stops everything gracefully (each agent process: stdin closed, then signals); no process is
   * left. `handOver` (a PostgreSQL store): the sessions are not released but handed over to the
   * live members of the cluster, which resume them (a rolling restart, docs/cluster.md); waits
   * up to two leases and 2 s for them to be taken.
   */
  stop(options?: { readonly handOver?: boolean }): Promise<void>;
}

/** Options of {@link Host.serve}. */
export interface ServeOptions {
  /** After the editor's EOF, how long its requests may still run before turns are cancelled, in ms (default 30 000); anything but a number ≥ 0 throws a TypeError from `serve`. */
  readonly drainTimeoutMs?: number;
}

/** A node of {@link Host.tree}. */
export interface HostTreeNode {
  readonly id: string;
  readonly type: 'host' | 'agent' | 'session';
  readonly status: string;
  readonly children: ReadonlyArray<HostTreeNode | SupervisionTreeNode>;
}
