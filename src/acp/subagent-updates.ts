/**
 * Subagent child sessions toward an editor (docs/acp.md, "Subagent sessions"). The host
 * journals a child's updates under its parent, tagged with the child's id
 * (`SUBAGENT_META_KEY`); here each is sent with the child's `sessionId` again, the tag taken
 * off. An editor that can take subagents (a v2 one, whose baseline they are, or a v1 one that
 * advertised `clientCapabilities.subagents`) gets the announcements and the children's
 * updates; another one gets neither (ACP forbids sending them to it): it sees what the agent
 * says in the parent session itself.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { SUBAGENT_META_KEY } from '../protocol/native-agent.js';
import type { Live } from './server-live.js';

/** Whether the editor of this connection takes subagent sessions. */
export function takesSubagents(live: Live): boolean {
  if (live.v2) return true;
  const subagents = (live.context?.clientCapabilities as { subagents?: unknown } | undefined)?.subagents;
  return typeof subagents === 'object' && subagents !== null && !Array.isArray(subagents);
}

/**
 * Where an update of `sessionId`'s journal goes: the session and update to send (a child's
 * with the child's id, untagged), or `undefined` when this editor does not take subagents
 * and the update is a child's or an announcement.
 */
export function subagentRouting(live: Live, sessionId: string, update: SessionUpdate): { sessionId: string; update: SessionUpdate } | undefined {
  const meta = (update as { _meta?: Record<string, unknown> | null })._meta;
  const child = meta?.[SUBAGENT_META_KEY];
  const announcement = (update as { sessionUpdate: string }).sessionUpdate === 'subagent_update';
  if (typeof child !== 'string') return announcement && !takesSubagents(live) ? undefined : { sessionId, update };
  if (!takesSubagents(live)) return undefined;
  const { [SUBAGENT_META_KEY]: _tag, ...rest } = meta as Record<string, unknown>;
  const untagged = { ...update } as { _meta?: unknown };
  if (Object.keys(rest).length > 0) untagged._meta = rest;
  else delete untagged._meta;
  return { sessionId: child, update: untagged as SessionUpdate };
}
