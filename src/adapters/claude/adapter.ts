/**
 * Claude Code as an ACP agent: the session adapter (one `claude` process per ACP session,
 * in stream-json mode with the SDK control protocol) and the adapter definition.
 *
 * After every (re)start of the CLI the `initialize` control request is sent again, and a
 * restarted CLI runs with `--resume=<captured session id>`: the two things the seeds'
 * libraries forget. A session resumed or loaded from the host's journal (`adapter.start`
 * with `{ claudeSessionId }`) runs `--resume` from its first start; an id that is not a
 * UUID (Claude Code's form) is refused before (`checkResume`) and never reaches argv.
 */
import type { ContentBlock, SessionConfigOption } from '@agentclientprotocol/sdk';
import type { AgentRequestEvent } from '../../protocol/native-agent.js';
import { RpcError } from '../../jsonrpc/rpc-error.js';
import type { AdapterDefinition, CommandContext, SessionAdapterEvent, SessionAdapterOutput } from '../adapter.js';
import { cliSessionActions, fromCliSession, type CliSessionContext } from '../cli-session.js';
import { checkUuidField, isUuid } from '../resume-check.js';
import { permissionOptions, promptOutcome } from '../session-outcomes.js';
import { claudeResultRateLimit } from '../rate-limit.js';
import { retryRateLimitedTurn } from '../rate-limited-turn.js';
import {
  claudeModes,
  controlRequest,
  emptyTurn,
  permissionAnswer,
  permissionToolCall,
  sessionSetupOf,
  skippedLineOf,
  stopReasonOf,
  toolRunsOf,
  unreadToolResult,
  updatesOf,
  usageOf,
  userMessage,
  type ClaudeMessage,
  type TurnMemory,
} from './mapping.js';
import { agentRestartDefaults } from '../../supervision/agent-restart-defaults.js';
import { CLIENT_METHODS } from '../../protocol/methods.js';

/** A control request we sent and wait for. */
interface PendingControl {
  readonly kind: 'initialize' | 'interrupt' | 'setMode' | 'setModel';
  readonly requestId: string | undefined;
  readonly value: string | undefined;
}

interface ClaudeContext extends CliSessionContext {
  /** Claude's own session id, from `system:init` (or the journal); `--resume` takes it. */
  readonly claudeSessionId: string | undefined;
  /** The commands of the last `initialize` answer, told again to an editor that resumes. */
  readonly commands: ReturnType<typeof sessionSetupOf>['commands'];
  readonly turn: TurnMemory;
  readonly controls: Readonly<Record<string, PendingControl>>;
  /** Permission requests to the client: key → the CLI's request id and the tool input. */
  readonly permissions: Readonly<Record<string, { readonly input: unknown }>>;
  readonly nextControl: number;
  readonly mode: string;
  readonly model: string | undefined;
  readonly configOptions: readonly SessionConfigOption[];
}

/** The CLI's message; a JSON value that is not an object (never a message of the CLI) reads as `{}`. */
const asMessage = (event: SessionAdapterEvent): ClaudeMessage => {
  const message = (event as { message?: unknown }).message;
  return (typeof message === 'object' && message !== null && !Array.isArray(message) ? message : {}) as ClaudeMessage;
};

/** The Claude session id in a resume state, if it has one in Claude's form (a UUID): only such a value reaches `--resume`. */
function claudeSessionIdOf(resume: unknown): string | undefined {
  const id = (resume as ClaudeResume | undefined)?.claudeSessionId;
  return isUuid(id) ? id : undefined;
}

/** The answers to the start requests, then the commands: what an editor opening (or resuming) the session needs. */
function setupOutputs(context: Pick<ClaudeContext, 'sessionId' | 'startRequests' | 'mode' | 'configOptions' | 'commands'>): SessionAdapterOutput[] {
  const sessionId = context.sessionId as string;
  const outputs: SessionAdapterOutput[] = context.startRequests.map((requestId) => ({
    type: 'acp.respond',
    requestId,
    result: { sessionId, modes: { currentModeId: context.mode, availableModes: claudeModes }, configOptions: context.configOptions },
  }));
  if (context.commands.length > 0) outputs.push({ type: 'acp.update', sessionId, update: { sessionUpdate: 'available_commands_update', availableCommands: [...context.commands] } });
  return outputs;
}
const isControlResponse = (message: ClaudeMessage) => message.type === 'control_response';
const responseIdOf = (message: ClaudeMessage) => (message.response as { request_id?: string } | undefined)?.request_id;

const action = cliSessionActions<ClaudeContext>();

/** The session adapter machine for Claude Code: the CLI-session skeleton, with Claude's handshake (`initialize`) and mapping. */
export const claudeSessionMachine = fromCliSession<ClaudeContext>({
  id: 'claudeSession',
  agent: 'Claude Code',
  resumes: 'resumes the conversation',
  context: { claudeSessionId: undefined, commands: [], turn: emptyTurn, controls: {}, permissions: {}, nextControl: 1, mode: 'default', model: undefined, configOptions: [] },
  seed: (context, start) => ({ claudeSessionId: context.claudeSessionId ?? claudeSessionIdOf(start.resume) }),
  setupAnswers: setupOutputs,
  prompt: (context, request) => ({ writes: [userMessage(request.params.prompt as ContentBlock[], context.claudeSessionId)], context: { turn: emptyTurn } }),
  waiting: (context) => Object.keys(context.permissions).length > 0,
  toolRuns: toolRunsOf,
  forget: { turn: emptyTurn, permissions: {}, controls: {} },
  guards: {
    isInitResponse: ({ context, event }) => {
      if (event.type !== 'native.message' || !isControlResponse(asMessage(event))) return false;
      const id = responseIdOf(asMessage(event));
      return id !== undefined && context.controls[id]?.kind === 'initialize';
    },
    isResult: ({ event }) => event.type === 'native.message' && asMessage(event).type === 'result',
    /** The turn's `result` line was over the line limit: the turn is over all the same. */
    isSkippedResult: ({ event }) => event.type === 'native.oversize' && skippedLineOf(event.head).kind === 'result',
    /** The CLI refused `--resume`: it has no conversation under that id (another config dir or cwd, deleted). It exits next. */
    conversationMissing: ({ event }) => {
      if (event.type !== 'native.message' || asMessage(event).type !== 'result') return false;
      const errors = (asMessage(event) as { errors?: unknown }).errors;
      return Array.isArray(errors) && errors.some((error) => typeof error === 'string' && /No conversation found/iu.test(error));
    },
  },
  actions: {
    initialize: action(({ context, event, enqueue }) => {
      const requestId = `init_${context.nextControl}`;
      enqueue.assign({
        nextControl: context.nextControl + 1,
        controls: { ...context.controls, [requestId]: { kind: 'initialize', requestId: undefined, value: undefined } },
      });
      enqueue.emit({ type: 'port.write', message: controlRequest(requestId, { subtype: 'initialize', hooks: null }) });
    }),
    initialized: action(({ context, event, enqueue }) => {
      const message = asMessage(event);
      const id = responseIdOf(message) as string;
      const response = ((message.response as { response?: Record<string, unknown> }).response ?? {}) as Record<string, unknown>;
      const setupInfo = sessionSetupOf(response, context.model);
      const { [id]: _done, ...controls } = context.controls;
      const mode = context.restarts > 0 ? context.mode : setupInfo.modes.currentModeId;
      enqueue.assign({ controls, configOptions: setupInfo.configOptions, mode, commands: setupInfo.commands, startRequests: [] });
      if (context.sessionId) {
        for (const output of setupOutputs({ ...context, mode, configOptions: setupInfo.configOptions, commands: setupInfo.commands })) enqueue.emit(output);
      }
      // A restarted CLI starts in its default mode and model: put back the ones the editor chose,
      // before anything else goes to it (a continuation of a cut turn runs in them; the host's own
      // re-apply comes only after the session is recovered).
      let nextControl = context.nextControl;
      if (context.restarts > 0 && context.mode !== 'default') {
        enqueue.emit({ type: 'port.write', message: controlRequest(`mode_${nextControl}`, { subtype: 'set_permission_mode', mode: context.mode }) });
        nextControl += 1;
      }
      if (context.restarts > 0 && context.model !== undefined) {
        enqueue.emit({ type: 'port.write', message: controlRequest(`model_${nextControl}`, { subtype: 'set_model', model: context.model }) });
        nextControl += 1;
      }
      // Their ids are taken: the editor's next set_mode or set_model must not be settled by these answers.
      if (nextControl !== context.nextControl) enqueue.assign({ nextControl });
      enqueue.emit({ type: 'adapter.ready', restarts: context.restarts });
    }),
    /** Nothing to resume: the restarted CLI starts a new conversation, and the editor is told so. */
    forgetConversation: action(({ context, enqueue }) => {
      if (!context.claudeSessionId) return;
      // A turn cut by the crash goes on in the new conversation: the whole prompt again (continuation-text.ts).
      enqueue.assign({ claudeSessionId: undefined, ...(context.cut ? { cut: { ...context.cut, freshConversation: true as const } } : {}) });
      enqueue.emit({ type: 'adapter.resume', state: {} });
      if (context.sessionId) {
        enqueue.emit({
          type: 'acp.update',
          sessionId: context.sessionId,
          update: { sessionUpdate: 'notice', severity: 'warning', title: 'Claude Code started a new conversation', description: `Claude Code has no saved conversation ${context.claudeSessionId} (another config directory or working directory, or deleted); this session goes on in a new conversation.` } as never,
        });
      }
    }),
    onTurnMessage: action(({ context, event, enqueue }) => {
      const message = asMessage(event);
      const sessionId = context.sessionId as string;
      if (message.type === 'system' && message.subtype === 'init' && typeof message.session_id === 'string') {
        if (message.session_id !== context.claudeSessionId) {
          enqueue.assign({ claudeSessionId: message.session_id });
          enqueue.emit({ type: 'adapter.resume', state: { claudeSessionId: message.session_id } });
        }
        return;
      }
      if (message.type === 'control_request') {
        const request = (typeof message.request === 'object' && message.request !== null ? message.request : {}) as { subtype?: unknown; input?: unknown };
        const requestId = String(message.request_id);
        if (request.subtype === 'can_use_tool') {
          const toolCall = permissionToolCall(request, requestId);
          enqueue.assign({ permissions: { ...context.permissions, [requestId]: { input: toolCall.rawInput } } });
          // The CLI now waits for the user, not the other way round: it owes nothing meanwhile (`waiting`).
          enqueue.emit({
            type: 'acp.clientRequest',
            key: requestId,
            method: CLIENT_METHODS.session_request_permission,
            params: { sessionId, toolCall, options: permissionOptions('Always allow') },
          });
        } else {
          // Hooks, MCP messages, elicitations: not offered by this adapter; say so rather than leave the CLI waiting.
          enqueue.emit({ type: 'port.write', message: { type: 'control_response', response: { subtype: 'error', request_id: requestId, error: `acp-warden does not handle ${typeof request.subtype === 'string' ? request.subtype : 'this'} control requests` } } });
        }
        return;
      }
      let mapped: ReturnType<typeof updatesOf>;
      try {
        mapped = updatesOf(message, context.turn);
      } catch {
        // A message whose shape is not what the CLI prints (a missing event, content that is
        // not a list): dropped, the turn goes on. (Found by spec/fuzz/claude-native.spec.ts.)
        return;
      }
      enqueue.assign({ turn: mapped.memory });
      for (const update of mapped.updates) enqueue.emit({ type: 'acp.update', sessionId, update });
    }),
    finishTurn: action(({ context, event, enqueue }) => {
      const message = asMessage(event);
      const prompt = context.prompt;
      enqueue.assign({ prompt: undefined, turn: emptyTurn });
      if (!prompt) return;
      const usage = usageOf(message);
      if (usage && context.sessionId) enqueue.emit({ type: 'acp.update', sessionId: context.sessionId, update: usage });
      // A 429/529 before any tool call: sent again after the wait (rate-limited-turn.ts), the editor's request still open.
      if (retryRateLimitedTurn(context, prompt, claudeResultRateLimit(message), enqueue)) return;
      const outcome = stopReasonOf(message, prompt.cancelled);
      enqueue.emit(promptOutcome(prompt.requestId, outcome));
    }),
    /** The `result` line was skipped unread: the turn ended, with the stop reason its head tells (its usage is lost). */
    finishUnreadTurn: action(({ context, event, enqueue }) => {
      const prompt = context.prompt;
      const skipped = event.type === 'native.oversize' ? skippedLineOf(event.head) : undefined;
      enqueue.assign({ prompt: undefined, turn: emptyTurn });
      if (prompt) enqueue.emit(promptOutcome(prompt.requestId, stopReasonOf(skipped?.kind === 'result' ? skipped.result : { type: 'result' }, prompt.cancelled)));
    }),
    /** A tool's result line was skipped unread: its call is shown completed, saying its output was too long. */
    onSkippedTurnLine: action(({ context, event, enqueue }) => {
      if (event.type !== 'native.oversize' || !context.sessionId) return;
      const skipped = skippedLineOf(event.head);
      if (skipped.kind === 'toolResult') enqueue.emit({ type: 'acp.update', sessionId: context.sessionId, update: unreadToolResult(skipped.toolUseId, event.bytes, event.limit) });
    }),
    interrupt: action(({ context, enqueue }) => {
      if (!context.prompt || context.prompt.cancelled) return;
      const requestId = `interrupt_${context.nextControl}`;
      enqueue.assign({
        prompt: { ...context.prompt, cancelled: true },
        nextControl: context.nextControl + 1,
        controls: { ...context.controls, [requestId]: { kind: 'interrupt', requestId: undefined, value: undefined } },
      });
      enqueue.emit({ type: 'port.write', message: controlRequest(requestId, { subtype: 'interrupt' }) });
    }),
    answerPermission: action(({ context, event, enqueue }) => {
      if (event.type !== 'client.response' && event.type !== 'client.error') return;
      const pending = context.permissions[event.key];
      if (!pending) return;
      const { [event.key]: _answered, ...permissions } = context.permissions;
      enqueue.assign({ permissions });
      const outcome = event.type === 'client.response' ? (event.result as { outcome?: { outcome?: string; optionId?: string } })?.outcome : undefined;
      const allow = outcome?.outcome === 'selected' && (outcome.optionId === 'allow' || outcome.optionId === 'allow_always');
      enqueue.emit({ type: 'port.write', message: permissionAnswer(event.key, allow, pending.input) });
      if (outcome?.optionId === 'allow_always' && context.mode === 'default') {
        // "Always": the CLI stops asking for edits in this session.
        enqueue.emit({ type: 'port.write', message: controlRequest(`mode_${context.nextControl}`, { subtype: 'set_permission_mode', mode: 'acceptEdits' }) });
        enqueue.assign({ nextControl: context.nextControl + 1, mode: 'acceptEdits' });
        if (context.sessionId) enqueue.emit({ type: 'acp.update', sessionId: context.sessionId, update: { sessionUpdate: 'current_mode_update', currentModeId: 'acceptEdits' } });
      }
      // ACP: a cancelled permission means the turn is cancelled: deny, then interrupt.
      if (outcome?.outcome === 'cancelled' && context.prompt && !context.prompt.cancelled) {
        const requestId = `interrupt_${context.nextControl + 1}`;
        enqueue.assign({ prompt: { ...context.prompt, cancelled: true }, nextControl: context.nextControl + 2 });
        enqueue.emit({ type: 'port.write', message: controlRequest(requestId, { subtype: 'interrupt' }) });
      }
    }),
    setMode: action(({ context, event, enqueue }) => {
      const request = event as AgentRequestEvent;
      const mode = request.params.modeId as string;
      if (!claudeModes.some((entry) => entry.id === mode)) {
        enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.invalidParams(`unknown mode ${mode}`).toErrorObject() });
        return;
      }
      const requestId = `mode_${context.nextControl}`;
      enqueue.assign({ nextControl: context.nextControl + 1, controls: { ...context.controls, [requestId]: { kind: 'setMode', requestId: request.requestId, value: mode } } });
      enqueue.emit({ type: 'port.write', message: controlRequest(requestId, { subtype: 'set_permission_mode', mode }) });
    }),
    setModel: action(({ context, event, enqueue }) => {
      const request = event as AgentRequestEvent;
      const option = context.configOptions.find((entry) => entry.id === request.params.configId);
      const value = String(request.params.value);
      const known = option && option.type === 'select' && (option.options as Array<{ value?: string }>).some((entry) => entry.value === value);
      if (!known) {
        enqueue.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.invalidParams('unknown config option or value').toErrorObject() });
        return;
      }
      const requestId = `model_${context.nextControl}`;
      enqueue.assign({ nextControl: context.nextControl + 1, controls: { ...context.controls, [requestId]: { kind: 'setModel', requestId: request.requestId, value } } });
      enqueue.emit({ type: 'port.write', message: controlRequest(requestId, { subtype: 'set_model', model: value }) });
    }),
    onControlResponse: action(({ context, event, enqueue }) => {
      const message = asMessage(event);
      const id = responseIdOf(message);
      const pending = id ? context.controls[id] : undefined;
      if (!id || !pending) return;
      const { [id]: _done, ...controls } = context.controls;
      enqueue.assign({ controls });
      const failed = (message.response as { subtype?: string }).subtype === 'error';
      // The CLI says why it refused (say, bypass_not_launched): the editor hears it.
      const why = (message.response as { error?: unknown }).error;
      const refusal = typeof why === 'string' ? `: ${why}` : '';
      if (pending.kind === 'setMode' && pending.requestId) {
        if (failed) {
          enqueue.emit({ type: 'acp.error', requestId: pending.requestId, error: { code: -32603, message: `Claude Code refused the mode${refusal}` } });
          return;
        }
        enqueue.assign({ mode: pending.value as string });
        enqueue.emit({ type: 'acp.update', sessionId: context.sessionId as string, update: { sessionUpdate: 'current_mode_update', currentModeId: pending.value as string } });
        enqueue.emit({ type: 'acp.respond', requestId: pending.requestId, result: {} });
      } else if (pending.kind === 'setModel' && pending.requestId) {
        if (failed) {
          enqueue.emit({ type: 'acp.error', requestId: pending.requestId, error: { code: -32603, message: `Claude Code refused the model${refusal}` } });
          return;
        }
        const configOptions = context.configOptions.map((option) => (option.id === 'model' ? { ...option, currentValue: pending.value as string } : option)) as SessionConfigOption[];
        enqueue.assign({ model: pending.value, configOptions });
        enqueue.emit({ type: 'acp.respond', requestId: pending.requestId, result: { configOptions } });
      }
    }),
  },
  handshake: {
    action: 'initialize',
    initial: 'initializing',
    states: {
      initializing: { on: { 'native.message': { guard: 'isInitResponse', target: 'ready', actions: 'initialized' } } },
    },
  },
  on: {
    // Before the handshake (the states that take every line answer it themselves).
    'native.message': { guard: 'conversationMissing', actions: 'forgetConversation' },
  },
  starting: {
    'session.setMode': { actions: 'cli.refuseWhileStarting' },
    'session.setConfigOption': { actions: 'cli.refuseWhileStarting' },
  },
  ready: {
    'session.setMode': { actions: 'setMode' },
    'session.setConfigOption': { actions: 'setModel' },
    'native.message': { actions: 'onControlResponse' },
  },
  prompting: {
    'native.message': [
      { guard: 'isResult', target: 'ready', actions: 'finishTurn' },
      { guard: ({ event }: { event: SessionAdapterEvent }) => isControlResponse(asMessage(event)), actions: 'onControlResponse' },
      { actions: 'onTurnMessage' },
    ],
    // A line over the limit, skipped: the CLI goes on; what was lost is told, and a lost `result` still ends the turn.
    'native.oversize': [
      { guard: 'isSkippedResult', target: 'ready', actions: 'finishUnreadTurn' },
      { actions: 'onSkippedTurnLine' },
    ],
    'session.cancel': { actions: 'interrupt' },
    'client.response': { actions: 'answerPermission' },
    'client.error': { actions: 'answerPermission' },
    'session.setMode': { actions: 'setMode' },
    'session.setConfigOption': { actions: 'setModel' },
  },
});

/** Where the session's CLI resumes from after a restart (the `adapter.resume` state, journaled by the host). */
interface ClaudeResume {
  readonly claudeSessionId?: string;
}

/** Claude Code (`--agent claude`): the `claude` CLI in stream-json mode. */
export const claudeAdapter: AdapterDefinition = {
  name: 'claude',
  agentInfo: { name: 'claude-code', title: 'Claude Code', version: '0.1.0' },
  capabilities: {
    // Load and resume start a CLI with `--resume` from the journaled state; load replays nothing itself (the host replays its journal).
    loadSession: true,
    sessionCapabilities: { resume: {}, close: {} },
    promptCapabilities: { image: true, audio: false, embeddedContext: true },
    mcpCapabilities: { http: false, sse: false },
  },
  executable: {
    name: 'claude',
    envVar: 'CLAUDE_CODE_EXECUTABLE',
    versionArgs: ['--version'],
    install: 'npm install -g @anthropic-ai/claude-code',
  },
  session: claudeSessionMachine,
  // The session reads and writes its own port (fromCliSession).
  ownsPort: true,
  checkResume: (state) => checkUuidField(state, 'claudeSessionId', 'a Claude Code session id'),
  command(context: CommandContext) {
    const claudeSessionId = claudeSessionIdOf(context.resume);
    const args = [
      '-p',
      '--output-format', 'stream-json',
      '--input-format', 'stream-json',
      '--verbose',
      '--include-partial-messages',
      '--permission-prompt-tool', 'stdio',
      // One argument: the id can never be read as a flag of its own.
      ...(claudeSessionId ? [`--resume=${claudeSessionId}`] : []),
    ];
    return {
      args,
      env: {
        passthrough: claudeEnvironment,
        adapter: { CLAUDE_CODE_ENTRYPOINT: 'sdk-ts', CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1' },
      },
    };
  },
  port: { shutdown: { stdinGraceMs: 2000, killAfterMs: 3000 } },
  restart: agentRestartDefaults,
};

/**
 * The host variables Claude Code needs (its key, its endpoint and configuration); no other
 * agent's key passes.
 */
export const claudeEnvironment: readonly string[] = [
  'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'ANTHROPIC_SMALL_FAST_MODEL',
  'ANTHROPIC_CUSTOM_HEADERS', 'ANTHROPIC_DEFAULT_OPUS_MODEL', 'ANTHROPIC_DEFAULT_SONNET_MODEL', 'ANTHROPIC_DEFAULT_HAIKU_MODEL',
  'CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CONFIG_DIR', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX',
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC', 'DISABLE_AUTOUPDATER', 'DISABLE_TELEMETRY', 'DISABLE_ERROR_REPORTING',
  'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY',
];
