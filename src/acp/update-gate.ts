/**
 * An agent server's gates on what goes to the editor: updates and results the client did not
 * ask for (compaction, notices, boolean config options) are dropped or rendered for it.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { type Live } from './server-live.js';

/**
 * Updates the client did not ask for: `compaction_*` without `session.compaction` are
 * dropped; a `notice` without `session.notices` becomes a short agent message signed by
 * acp-warden (`noticeAsText`: the editor still learns what happened); boolean config options
 * without `configOptions.boolean` are left out.
 */
export function gateUpdate(live: Live, update: SessionUpdate): SessionUpdate | undefined {
  const session = live.context?.clientCapabilities.session as { notices?: unknown; compaction?: unknown } | undefined;
  switch (update.sessionUpdate) {
    case 'compaction_update':
    case 'compaction_summary_chunk':
      return session?.compaction ? update : undefined;
    case 'notice':
      return session?.notices ? update : noticeAsText(update as unknown as Notice);
    case 'config_option_update':
      return withoutUnsupportedOptions(live, update) as SessionUpdate;
    default:
      return update;
  }
}

/** A `notice` update's fields. */
export interface Notice {
  readonly severity: string;
  readonly title: string;
  readonly description?: string | null;
}

/** The `_meta` key that marks an agent message as acp-warden's rendering of a notice (and carries it). */
export const NOTICE_META_KEY = 'acp-warden/notice';

/**
 * A notice for a client without `session.notices`: an agent message, on lines of its own and
 * signed by acp-warden (so that neither the user nor the editor takes it for the agent's
 * words), with the notice itself under `_meta["acp-warden/notice"]`.
 */
export function noticeAsText(notice: Notice): SessionUpdate {
  const text = `\n\n[acp-warden ${notice.severity}] ${notice.title}${notice.description ? `: ${notice.description}` : ''}\n\n`;
  const meta = { [NOTICE_META_KEY]: { severity: notice.severity, title: notice.title, description: notice.description ?? null } };
  return { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text, _meta: meta }, _meta: meta };
}

/** Drops boolean config options from a result or update when the client cannot show them. */
export function withoutUnsupportedOptions(live: Live, value: unknown): unknown {
  const options = (value as { configOptions?: unknown } | undefined)?.configOptions;
  const booleans = (live.context?.clientCapabilities.session as { configOptions?: { boolean?: unknown } } | undefined)?.configOptions?.boolean;
  if (!Array.isArray(options) || booleans) return value;
  return { ...(value as object), configOptions: options.filter((option: { type?: string }) => option.type !== 'boolean') };
}
