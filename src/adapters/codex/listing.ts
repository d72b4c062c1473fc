/**
 * Codex's threads behind ACP `session/list`: the lister the adapter agent runs against a
 * short-lived `codex app-server` (see `SessionListing` in adapter-agent.ts). It does the
 * handshake (`initialize`, `initialized`), one `thread/list` with the mapped params, answers
 * the `session/list` with the mapped result, and ends (which stops the app-server).
 *
 * Shapes: `codex app-server generate-json-schema` (v2/ThreadListParams.json,
 * v2/ThreadListResponse.json) of Codex 0.171.0, and the recorded transcript
 * `spec/fixtures/codex-app-server-thread-list.ndjson`.
 */
import { enqueueActions, setup } from 'xstate';
import { describePortExit } from '../../port/port-exit.js';
import type { SessionAdapterEvent, SessionAdapterOutput } from '../adapter.js';
import { codexRequest, sessionListOf, threadListParams, type CodexMessage } from './mapping.js';
import { RpcError } from '../../jsonrpc/rpc-error.js';

/** What the adapter agent gives the lister: the `session/list` to answer. */
export interface CodexListInput {
  readonly requestId: string;
  readonly params: Record<string, unknown>;
  readonly pageSize: number;
}

interface CodexListContext extends CodexListInput {
  readonly answered: boolean;
}

const INITIALIZE_ID = 0;
const LIST_ID = 1;

const asMessage = (event: SessionAdapterEvent) => (event as { message: CodexMessage }).message;
const isResponse = (event: SessionAdapterEvent, id: number) => {
  if (event.type !== 'native.message') return false;
  const message = asMessage(event);
  return message.method === undefined && message.id === id;
};

/** The lister machine: `waitingForCli` → `initializing` → `listing` → `done` (final). */
export const codexListMachine = setup({
  types: {} as { context: CodexListContext; events: SessionAdapterEvent; emitted: SessionAdapterOutput; input: CodexListInput },
  guards: {
    initializeAnswered: ({ event }) => isResponse(event, INITIALIZE_ID),
    listAnswered: ({ event }) => isResponse(event, LIST_ID),
  },
  actions: {
    initialize: enqueueActions(({ enqueue }) => {
      // From now on the app-server owes an answer: silence is a hang (the port's watchdog).
      enqueue.emit({ type: 'port.busy', busy: true });
      enqueue.emit({ type: 'port.write', message: codexRequest(INITIALIZE_ID, 'initialize', { clientInfo: { name: 'acp-warden', title: 'acp-warden', version: '0.1.0' }, capabilities: null }) });
    }),
    list: enqueueActions(({ context, event, enqueue }) => {
      const error = asMessage(event).error;
      if (error) {
        enqueue.emit({ type: 'acp.error', requestId: context.requestId, error: { code: -32603, message: `Codex refused to initialize: ${error.message ?? 'unknown error'}` } });
        enqueue.assign({ answered: true });
        return;
      }
      enqueue.emit({ type: 'port.write', message: { method: 'initialized' } });
      enqueue.emit({ type: 'port.write', message: codexRequest(LIST_ID, 'thread/list', threadListParams(context.params, context.pageSize)) });
    }),
    answer: enqueueActions(({ context, event, enqueue }) => {
      const message = asMessage(event);
      enqueue.emit({ type: 'port.busy', busy: false });
      enqueue.assign({ answered: true });
      if (message.error) {
        // Codex 0.171.0: `{"code":-32600,"message":"invalid cursor: …"}` for a cursor it did not make.
        const invalidCursor = /invalid cursor/iu.test(message.error.message ?? '');
        enqueue.emit({
          type: 'acp.error',
          requestId: context.requestId,
          error: invalidCursor
            ? { code: -32602, message: `Codex: ${message.error.message as string}`, data: { cursor: context.params.cursor } }
            : { code: -32603, message: `Codex could not list its threads: ${message.error.message ?? 'unknown error'}` },
        });
        return;
      }
      enqueue.emit({ type: 'acp.respond', requestId: context.requestId, result: sessionListOf(message.result) });
    }),
    exited: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'port.exited' || context.answered) return;
      enqueue.assign({ answered: true });
      enqueue.emit({
        type: 'acp.error',
        requestId: context.requestId,
        error: RpcError.because('list_failed', `codex app-server ended before listing its threads (${describePortExit(event.exit.reason)})`, { exit: event.exit.reason, stderrTail: event.exit.stderrTail }).toErrorObject(),
      });
    }),
  },
}).createMachine({
  id: 'codexList',
  context: ({ input }) => ({ ...input, answered: false }),
  initial: 'waitingForCli',
  on: {
    'port.exited': { target: '.done', actions: 'exited' },
  },
  states: {
    waitingForCli: {
      on: { 'port.started': { target: 'initializing', actions: 'initialize' } },
    },
    initializing: {
      on: {
        'native.message': [
          { guard: ({ event }) => isResponse(event, INITIALIZE_ID) && asMessage(event).error !== undefined, target: 'done', actions: 'list' },
          { guard: 'initializeAnswered', target: 'listing', actions: 'list' },
        ],
      },
    },
    listing: {
      on: { 'native.message': { guard: 'listAnswered', target: 'done', actions: 'answer' } },
    },
    done: { type: 'final' },
  },
});
