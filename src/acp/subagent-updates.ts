/**
 * Subagent child sessions toward an editor (docs/acp.md, "Subagent sessions"). The host
 * journals a child's updates under its parent, tagged with the child's id
 * (`SUBAGENT_META_KEY`); here each is sent with the child's `sessionId` again, the tag taken
 * off. An editor that can take subagents (a v2 one, whose baseline they are, or a v1 one that
 * advertised `clientCapabilities.subagents`) gets the announcements, the messages between
 * sessions and the children's updates; another one gets none of them (ACP forbids sending them to it): it sees what the agent
 * says in the parent session itself.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { SUBAGENT_META_KEY } from '../protocol/native-agent.js';
import type { Live } from './server-live.js';
import { untagged } from '../session/subagent-tree.js';

/**
 * The update kinds ACP lets an agent send only to a client that takes subagents: the
 * announcement and the messages between sessions (claude-agent-acp sends a `session_message`
 * on the parent and on the child for the subagent's prompt, and one back for its reply).
 */
export const subagentKinds: ReadonlySet<string> = new Set(['subagent_update', 'session_message', 'session_message_chunk']);

/** An editor's `initialize`, as the core keeps it (version-neutral). */
interface EditorContext {
  readonly protocolVersion: number;
  readonly clientCapabilities: object;
}

/**
 * Whether an editor takes subagent sessions: a v2 one (they are its baseline, whether or not
 * it names them), or a v1 one that advertised `clientCapabilities.subagents` (an object).
 */
export function asksForSubagents(context: EditorContext | undefined): boolean {
  if (!context) return false;
  if (context.protocolVersion >= 2) return true;
  return optsInToSubagents((context.clientCapabilities as { subagents?: unknown }).subagents);
}

/** Whether a v1 `clientCapabilities.subagents` value opts in: only an object does, as the spec says. */
export function optsInToSubagents(subagents: unknown): boolean {
  return typeof subagents === 'object' && subagents !== null && !Array.isArray(subagents);
}

/**
 * The client capabilities an agent is initialized with for `context`'s editor: the editor's,
 * with `subagents` when that editor takes them (docs/acp.md, "Subagent sessions").
 */
export function capabilitiesForAgent(context: EditorContext | undefined): Record<string, unknown> {
  const capabilities = { ...(context?.clientCapabilities as Record<string, unknown> | undefined) };
  if (asksForSubagents(context) && capabilities.subagents === undefined) capabilities.subagents = {};
  return capabilities;
}

/** Whether the editor of this connection takes subagent sessions. */
export function takesSubagents(live: Live): boolean {
  return live.v2 !== undefined || asksForSubagents(live.context);
}

/**
 * Where an update of `sessionId`'s journal goes: the session and update to send (a child's
 * with the child's id, untagged), or `undefined` when this editor does not take subagents
 * and the update is a child's or an announcement.
 */
export function subagentRouting(live: Live, sessionId: string, update: SessionUpdate): { sessionId: string; update: SessionUpdate } | undefined {
  const meta = (update as { _meta?: Record<string, unknown> | null })._meta;
  const child = meta?.[SUBAGENT_META_KEY];
  const subagentsOnly = subagentKinds.has((update as { sessionUpdate: string }).sessionUpdate);
  if (typeof child !== 'string') return subagentsOnly && !takesSubagents(live) ? undefined : { sessionId, update };
  if (!takesSubagents(live)) return undefined;
  return { sessionId: child, update: untagged(update) };
}
