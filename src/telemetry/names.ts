/**
 * The names warden's telemetry uses: span names, attribute keys, metric names. They are a
 * stable, documented scheme (docs/observability.md): a dashboard or a query written against
 * them keeps working. `acp_warden.*` is warden's own; `gen_ai.*` is used where OpenTelemetry's
 * GenAI semantic conventions name the same thing (the conversation, the tool call).
 */

/** The instrumentation scope (tracer and meter name). */
export const instrumentationScope = 'acp-warden';

/** The default `service.name` when `OTEL_SERVICE_NAME` is not set. */
export const defaultServiceName = 'acp-warden';

/** Span names. */
export const spanNames = {
  /** The editor's `initialize`: what a native agent process started for it is started in. */
  initialize: 'acp_warden.initialize',
  /** A session, from `session/new` (or load, resume) to its close, failure, or the host's end. */
  session: 'acp_warden.session',
  /** A turn: `session/prompt` to its stop reason (or error). */
  turn: 'acp_warden.turn',
  /** A tool call of the agent, from `tool_call` to its `completed` / `failed` update (or the turn's end). */
  toolCall: 'acp_warden.tool_call',
  /** A permission request to the editor, until the editor answers it. */
  permission: 'acp_warden.permission',
  /** The agent process ended and is being restarted: from its exit to the new process being up. */
  restart: 'acp_warden.agent.restart',
  /** The conversation being resumed on the new process, until it is back (or the session fails). */
  recovery: 'acp_warden.session.recovery',
} as const;

/** Attribute keys. */
export const attributes = {
  agent: 'acp_warden.agent',
  sessionId: 'acp_warden.session.id',
  /** OpenTelemetry GenAI: the conversation (the ACP session id). */
  conversationId: 'gen_ai.conversation.id',
  /** Which client of `warden serve` sent the request (its address, `over HTTP`, its User-Agent), on the session and turn spans it started. */
  clientPeer: 'acp_warden.client.peer',
  /** How the session was opened: `new`, `load`, `resume`, `fork`. */
  sessionHow: 'acp_warden.session.how',
  /** The turn's stop reason (`end_turn`, `cancelled`, `max_tokens`, ...), or `error`. */
  stopReason: 'acp_warden.turn.stop_reason',
  /** A failed turn's JSON-RPC error code. */
  errorCode: 'acp_warden.error.code',
  /** OpenTelemetry GenAI: `execute_tool` on tool call spans. */
  operationName: 'gen_ai.operation.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolName: 'gen_ai.tool.name',
  /** ACP's tool kind (`read`, `edit`, `execute`, ...). */
  toolKind: 'acp_warden.tool.kind',
  /** The tool call's last status (`completed`, `failed`, or the status it had when its turn ended). */
  toolStatus: 'acp_warden.tool.status',
  /** `true` on a tool call the agent never reported `completed` or `failed`: it ended with its turn (or its session). */
  toolUnfinished: 'acp_warden.tool.unfinished',
  /** `selected` or `cancelled`. */
  permissionOutcome: 'acp_warden.permission.outcome',
  /** The option the editor chose. */
  permissionOption: 'acp_warden.permission.option_id',
  /** Restarts of the session's agent process so far, this one included. */
  restartCount: 'acp_warden.restart.count',
  /** Why the agent process ended: `signaled`, `exited`, `hung`, `memory_exceeded`, `inner_cli_dead`, `oversize_line`, `input_closed`, `spawn_failed`, `unknown`. */
  exitReason: 'acp_warden.exit.reason',
  /** The exit in words (`Agent process was killed with SIGKILL`). */
  exitDescription: 'acp_warden.exit.description',
  /** `recovered` or `failed`. */
  recoveryOutcome: 'acp_warden.recovery.outcome',
  /** Why a session failed (its agent gave up). */
  failureReason: 'acp_warden.failure.reason',
  /** `append` (one journal entry written) or `commit` (a group of updates made durable). */
  journalOperation: 'acp_warden.journal.operation',
} as const;

/** Metric names. */
export const metricNames = {
  /** UpDownCounter: sessions open now, by agent. */
  sessionsOpen: 'acp_warden.sessions.open',
  /** Counter: sessions whose agent gave up, by agent. */
  sessionsFailed: 'acp_warden.sessions.failed',
  /** Counter: turns ended, by agent and stop reason. */
  turns: 'acp_warden.turns',
  /** Histogram (s): turn duration, by agent and stop reason. */
  turnDuration: 'acp_warden.turn.duration',
  /** Counter: agent process restarts, by agent and exit reason. */
  restarts: 'acp_warden.agent.restarts',
  /** Counter: sessions resumed after a restart, by agent. */
  recoveries: 'acp_warden.agent.recoveries',
  /** Histogram (s): journal write latency, by operation (`append`, `commit`). */
  journalDuration: 'acp_warden.journal.duration',
} as const;
