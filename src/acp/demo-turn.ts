/**
 * One prompt turn of the demo agent (`demo-agent.ts`), as its own machine: the agent spawns
 * one per prompt, so that turns of different sessions run side by side, each with its own
 * word timer and its own permission wait. The turn decides about the demo tool from the
 * session's mode (`ask` asks, `auto` runs it without asking, `plan` runs nothing and says what
 * it would run) and from an earlier "always" answer, streams its answer word by word, and
 * tells its parent (the agent) every update, each request to the client and how it ended; the
 * agent journals and relays them.
 */
import type { PermissionOption, SessionUpdate } from '@agentclientprotocol/sdk';
import { enqueueActions, sendParent, setup } from 'xstate';
import type { ErrorObject } from '../jsonrpc/rpc-error.js';

/** How the demo agent runs tools in a session: `ask` asks permission first, `auto` does not, `plan` only says what it would run. */
export type DemoModeId = 'ask' | 'auto' | 'plan';

/** An "always" answer to the demo tool's permission, remembered for the rest of the session. */
export type DemoToolPolicy = 'allow' | 'reject';

/** What a turn starts from (the agent's view of the session when the prompt arrives). */
export interface DemoTurnInput {
  readonly sessionId: string;
  /** The agent server's key of the `session/prompt` request. */
  readonly requestId: string;
  /** The prompt's text. */
  readonly text: string;
  readonly mode: DemoModeId;
  readonly toolPolicy: DemoToolPolicy | undefined;
  /** The key of this turn's permission request, if it asks one. */
  readonly permissionKey: string;
  /** This turn's tool call id (unique in the session's history). */
  readonly toolCallId: string;
  /** Milliseconds between streamed words. */
  readonly wordDelayMs: number;
}

/** How the demo tool went in a turn. */
type ToolOutcome = 'none' | 'planned' | 'completed' | 'rejected' | 'rejectedBefore' | 'cancelled' | 'failed';

/** A turn's context: its input, and how far its answer has streamed. */
export interface DemoTurnContext extends DemoTurnInput {
  /** Words still to stream (filled once the tool's outcome is known). */
  readonly words: readonly string[];
  /** What was streamed so far. */
  readonly said: string;
}

/** Events a turn receives from the agent. */
export type DemoTurnEvent =
  | { readonly type: 'turn.cancel' }
  | { readonly type: 'turn.permissionAnswered'; readonly result: unknown }
  | { readonly type: 'turn.permissionFailed'; readonly error: ErrorObject };

/** Events a turn sends its parent, the agent. */
export type DemoTurnReport =
  | { readonly type: 'turn.update'; readonly sessionId: string; readonly update: SessionUpdate }
  | { readonly type: 'turn.askPermission'; readonly sessionId: string; readonly key: string; readonly params: unknown }
  | { readonly type: 'turn.remember'; readonly sessionId: string; readonly policy: DemoToolPolicy }
  | { readonly type: 'turn.finished'; readonly sessionId: string; readonly requestId: string; readonly stopReason: 'end_turn' | 'cancelled'; readonly said: string };

/** What the demo tool's permission request offers, by option id. */
const demoPermissionOptions: readonly PermissionOption[] = [
  { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
  { optionId: 'allow-always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject-always', name: 'Always reject', kind: 'reject_always' },
];

const toolTitle = 'Run the demo tool';
const toolInput = { command: 'demo-tool --greet' };

/** Whether a prompt asks for the demo tool. */
function wantsTool(text: string): boolean {
  return /\b(tool|permission)\b/iu.test(text);
}

/** The kind of the option the client selected; undefined for `cancelled` or an option we did not offer. */
function selectedKind(result: unknown): PermissionOption['kind'] | undefined {
  const outcome = (result as { outcome?: { outcome?: string; optionId?: unknown } } | undefined)?.outcome;
  if (outcome?.outcome !== 'selected') return undefined;
  return demoPermissionOptions.find((option) => option.optionId === outcome.optionId)?.kind;
}

/** What the tool's result says, for each outcome that is not `none`. */
const toolText: Record<Exclude<ToolOutcome, 'none' | 'planned'>, string> = {
  completed: 'demo tool: hello from the tool',
  rejected: 'demo tool: not run, the permission was rejected',
  rejectedBefore: 'demo tool: not run, rejected always earlier in this session',
  cancelled: 'demo tool: not run, the permission request was cancelled',
  failed: 'demo tool: not run, the permission request failed',
};

/** What the answer says about the tool, so that the text matches the tool call's status. */
const toolSentence: Record<ToolOutcome, string> = {
  none: '',
  planned: ' In mode plan I only say what I would do: run the demo tool (demo-tool --greet); switch to mode ask or auto to run it.',
  completed: ' I ran the demo tool; it said hello.',
  rejected: ' I did not run the demo tool: you rejected it.',
  rejectedBefore: ' I did not run the demo tool: you rejected it always.',
  cancelled: ' I did not run the demo tool: the permission request was cancelled.',
  failed: ' I did not run the demo tool: the permission request failed.',
};

/** The demo agent's answer to a prompt, given how its tool went. */
function demoAnswer(text: string, tool: ToolOutcome = 'none'): string {
  return text.length === 0 ? `You sent an empty prompt.${toolSentence[tool]}` : `You said: ${text}.${toolSentence[tool]} This is the acp-warden demo agent, answering word by word.`;
}

function words(text: string): string[] {
  return text.split(' ').map((word, index, all) => (index < all.length - 1 ? `${word} ` : word));
}

const report = (value: DemoTurnReport) => value;

/** One turn of the demo agent: decide about the tool, maybe wait for permission, stream, end. */
export const demoTurnMachine = setup({
  types: {} as {
    context: DemoTurnContext;
    events: DemoTurnEvent;
    input: DemoTurnInput;
  },
  delays: { word: ({ context }) => context.wordDelayMs },
  guards: {
    noTool: ({ context }) => !wantsTool(context.text),
    planMode: ({ context }) => context.mode === 'plan',
    /** Mode `auto`, or "always allow" earlier in the session: the tool runs without asking. */
    runsWithoutAsking: ({ context }) => context.mode === 'auto' || context.toolPolicy === 'allow',
    rejectedBefore: ({ context }) => context.toolPolicy === 'reject',
    allowed: ({ event }) => event.type === 'turn.permissionAnswered' && ['allow_once', 'allow_always'].includes(selectedKind(event.result) ?? ''),
    wordsLeft: ({ context }) => context.words.length > 0,
  },
  actions: {
    /** The tool call as it starts: `in_progress` when it runs at once, `pending` when it waits for an answer. */
    announceTool: sendParent(({ context }, params: { status: 'pending' | 'in_progress' }) => report({
      type: 'turn.update',
      sessionId: context.sessionId,
      update: { sessionUpdate: 'tool_call', toolCallId: context.toolCallId, title: toolTitle, kind: 'execute', status: params.status, rawInput: toolInput },
    })),
    /** Mode plan: what it would run, as a plan entry; no tool call, since nothing runs. */
    planTool: sendParent(({ context }) => report({
      type: 'turn.update',
      sessionId: context.sessionId,
      update: { sessionUpdate: 'plan', entries: [{ content: `${toolTitle}: ${toolInput.command}`, priority: 'medium', status: 'pending' }] },
    })),
    askPermission: sendParent(({ context }) => report({
      type: 'turn.askPermission',
      sessionId: context.sessionId,
      key: context.permissionKey,
      params: {
        sessionId: context.sessionId,
        toolCall: { toolCallId: context.toolCallId, title: toolTitle, kind: 'execute', status: 'pending', rawInput: toolInput },
        options: demoPermissionOptions,
      },
    })),
    /** An "always" answer holds for the session's later turns. */
    rememberAnswer: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'turn.permissionAnswered') return;
      const kind = selectedKind(event.result);
      const policy = kind === 'allow_always' ? 'allow' : kind === 'reject_always' ? 'reject' : undefined;
      if (policy) enqueue.sendParent(report({ type: 'turn.remember', sessionId: context.sessionId, policy }));
    }),
    /** The tool's outcome: its tool call update (`completed` only when it ran), and the answer that says so. */
    settleTool: enqueueActions(({ context, event, enqueue }, params: { outcome: ToolOutcome | 'answer' }) => {
      const outcome: ToolOutcome = params.outcome !== 'answer'
        ? params.outcome
        : event.type === 'turn.permissionAnswered' && (event.result as { outcome?: { outcome?: string } } | undefined)?.outcome?.outcome === 'cancelled' ? 'cancelled' : 'rejected';
      enqueue.assign({ words: words(demoAnswer(context.text, outcome)) });
      if (outcome === 'none' || outcome === 'planned') return;
      enqueue.sendParent(report({
        type: 'turn.update',
        sessionId: context.sessionId,
        update: { sessionUpdate: 'tool_call_update', toolCallId: context.toolCallId, status: outcome === 'completed' ? 'completed' : 'failed', content: [{ type: 'content', content: { type: 'text', text: toolText[outcome] } }] },
      }));
    }),
    streamWord: enqueueActions(({ context, enqueue }) => {
      const [next = '', ...rest] = context.words;
      enqueue.assign({ words: rest, said: context.said + next });
      enqueue.sendParent(report({ type: 'turn.update', sessionId: context.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: next } } }));
    }),
    /** A cancel while the permission is out: the tool call fails (it never ran) before the turn ends. */
    abandonTool: sendParent(({ context }) => report({
      type: 'turn.update',
      sessionId: context.sessionId,
      update: { sessionUpdate: 'tool_call_update', toolCallId: context.toolCallId, status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'demo tool: not run, the prompt was cancelled' } }] },
    })),
    finished: sendParent(({ context }, params: { stopReason: 'end_turn' | 'cancelled' }) => report({
      type: 'turn.finished',
      sessionId: context.sessionId,
      requestId: context.requestId,
      stopReason: params.stopReason,
      said: context.said,
    })),
  },
}).createMachine({
  id: 'demoTurn',
  context: ({ input }) => ({ ...input, words: [], said: '' }),
  initial: 'deciding',
  on: {
    'turn.cancel': { target: '.cancelled' },
  },
  states: {
    deciding: {
      always: [
        { guard: 'noTool', target: 'streaming', actions: { type: 'settleTool', params: { outcome: 'none' } } },
        { guard: 'planMode', target: 'streaming', actions: ['planTool', { type: 'settleTool', params: { outcome: 'planned' } }] },
        {
          guard: 'runsWithoutAsking',
          target: 'streaming',
          actions: [{ type: 'announceTool', params: { status: 'in_progress' } }, { type: 'settleTool', params: { outcome: 'completed' } }],
        },
        {
          guard: 'rejectedBefore',
          target: 'streaming',
          actions: [{ type: 'announceTool', params: { status: 'pending' } }, { type: 'settleTool', params: { outcome: 'rejectedBefore' } }],
        },
        { target: 'awaitingPermission', actions: [{ type: 'announceTool', params: { status: 'pending' } }, 'askPermission'] },
      ],
    },
    awaitingPermission: {
      on: {
        'turn.permissionAnswered': [
          { guard: 'allowed', target: 'streaming', actions: ['rememberAnswer', { type: 'settleTool', params: { outcome: 'completed' } }] },
          // reject_once, reject_always, cancelled, or an option we never offered: the tool does not run.
          { target: 'streaming', actions: ['rememberAnswer', { type: 'settleTool', params: { outcome: 'answer' } }] },
        ],
        'turn.permissionFailed': { target: 'streaming', actions: { type: 'settleTool', params: { outcome: 'failed' } } },
        'turn.cancel': { target: 'cancelled', actions: 'abandonTool' },
      },
    },
    streaming: {
      after: {
        word: [
          { guard: 'wordsLeft', target: 'streaming', reenter: true, actions: 'streamWord' },
          { target: 'done' },
        ],
      },
    },
    done: {
      type: 'final',
      entry: { type: 'finished', params: { stopReason: 'end_turn' } },
    },
    cancelled: {
      type: 'final',
      entry: { type: 'finished', params: { stopReason: 'cancelled' } },
    },
  },
});
