/**
 * A v2 agent's `session/request_permission` in v1's shape, the one warden's permission
 * policies and every editor behind a passthrough take. v2 asks with a title of its own, an
 * optional description and subject (a tool call, a command); v1 asks about a tool call. So:
 * a tool call subject is that tool call (as v1 updates it: v2-inbound.ts), a command is a
 * tool call of kind `execute` whose raw input is the command and its cwd, and a request
 * without a subject is a tool call named by the request's title. The prompt's own title,
 * description and subject type (a command subject whole) are kept in `_meta["acp-warden/v2Permission"]`. The options
 * and the answer (`{ outcome }`) are the same in both versions and pass as they are.
 */
import type { RequestPermissionRequest, ToolCallUpdate } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { toolContentFromV2, V2_STATUS_META_KEY } from './v2-inbound.js';

/** The `_meta` key keeping what a v2 permission prompt said that v1 has no place for. */
export const V2_PERMISSION_META_KEY = 'acp-warden/v2Permission';

/**
 * What a v2 agent asked with, kept under {@link V2_PERMISSION_META_KEY}: `subject` is its
 * subject's `type` (absent: it named none); a command subject is kept whole in `command`
 * (v1's tool call has no place for its terminal, its `_meta`, or the absence of a tool call id).
 */
export interface KeptV2Prompt {
  readonly title?: string;
  readonly description?: string;
  readonly subject?: string;
  readonly command?: V2.CommandPermissionSubject;
}

/**
 * The prompt a v2 agent asked with, read back from a v1-shaped request's `_meta`, and the rest
 * of that `_meta` (undefined when nothing is left). A `_meta` without it (a v1 agent's), or with
 * a value that is not an object, is returned as it is.
 */
export function keptV2Prompt(meta: RequestPermissionRequest['_meta']): { prompt: KeptV2Prompt | undefined; meta: Record<string, unknown> | undefined } {
  if (meta === undefined || meta === null) return { prompt: undefined, meta: undefined };
  const { [V2_PERMISSION_META_KEY]: kept, ...rest } = meta;
  if (typeof kept !== 'object' || kept === null || Array.isArray(kept)) return { prompt: undefined, meta };
  return { prompt: kept as KeptV2Prompt, meta: Object.keys(rest).length === 0 ? undefined : rest };
}

/** `request` (from a v2 agent) as a v1 permission request; `id` names a tool call when the request names none. */
export function permissionRequestFromV2(request: V2.RequestPermissionRequest, id: string): RequestPermissionRequest {
  const { sessionId, title, description, subject, options, _meta } = request;
  const type = (subject as { type?: string } | null | undefined)?.type;
  const command = type === 'command' ? withoutType(subject as V2.CommandPermissionSubject & { type: 'command' }) : undefined;
  const prompt: KeptV2Prompt = { title, ...(description ? { description } : {}), ...(type ? { subject: type } : {}), ...(command ? { command } : {}) };
  return {
    sessionId,
    toolCall: toolCallOfSubject(subject ?? undefined, title, id),
    options: options as RequestPermissionRequest['options'],
    _meta: { ...(_meta ?? {}), [V2_PERMISSION_META_KEY]: prompt },
  };
}

/** A command subject's fields, its `type` left to {@link KeptV2Prompt.subject}. */
function withoutType({ type: _type, ...command }: V2.CommandPermissionSubject & { type: 'command' }): V2.CommandPermissionSubject {
  return command;
}

function toolCallOfSubject(subject: V2.RequestPermissionSubject | undefined, title: string, id: string): ToolCallUpdate {
  if (subject?.type === 'tool_call') {
    const { toolCall } = subject as V2.ToolCallPermissionSubject & { type: 'tool_call' };
    const { toolCallId, title: own, kind, status, content, locations, rawInput, rawOutput, _meta } = toolCall;
    const v1Status = status === 'cancelled' ? 'failed' : status === 'paused' ? 'in_progress' : status;
    const meta = v1Status !== status ? { ...(_meta ?? {}), [V2_STATUS_META_KEY]: status } : _meta;
    return {
      toolCallId,
      title: own ?? title,
      ...(kind === undefined ? {} : { kind }),
      ...(v1Status === undefined ? {} : { status: v1Status }),
      ...(content === undefined || content === null ? {} : { content: content.map(toolContentFromV2) }),
      ...(locations === undefined ? {} : { locations }),
      ...(rawInput === undefined ? {} : { rawInput }),
      ...(rawOutput === undefined ? {} : { rawOutput }),
      ...(meta ? { _meta: meta } : {}),
    } as ToolCallUpdate;
  }
  if (subject?.type === 'command') {
    const { command, cwd, toolCallId } = subject as V2.CommandPermissionSubject & { type: 'command' };
    return { toolCallId: toolCallId ?? id, title, kind: 'execute', rawInput: { command, cwd } };
  }
  return { toolCallId: id, title };
}
