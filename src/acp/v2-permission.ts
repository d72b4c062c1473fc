/**
 * An agent's permission request (v1-shaped, as the core carries it) as a v2 editor reads it:
 * v2 asks with a `title` of its own, an optional `description`, and names what is asked about
 * as a `subject`. A request that came from a v2 agent keeps what the agent asked with in
 * `_meta["acp-warden/v2Permission"]` (v2-agent-permission.ts): its title, description and
 * subject kind are given back as they were (a command as a command, no subject as none), so a
 * v2 editor behind warden sees the agent's own question. A v1 agent's request has a tool call
 * only: its title is the prompt's, the tool call (its content in v2's shapes) the subject. The
 * options and the answer are the same in both.
 */
import type { RequestPermissionRequest, ToolCallContent, ToolCallUpdate } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { keptV2Prompt, type KeptV2Prompt } from './v2-agent-permission.js';
import { toolContentToV2 } from './v2-updates.js';

/** What a v2 editor is shown when neither the agent nor the tool call gave a title. */
const untitled = 'Permission requested';

/** `params` of a v1 `session/request_permission` as v2's. */
export function permissionRequestToV2(params: RequestPermissionRequest): V2.RequestPermissionRequest {
  const { toolCall, options, sessionId } = params;
  const { prompt, meta } = keptV2Prompt(params._meta);
  const title = nonEmpty(prompt?.title) ?? nonEmpty(toolCall.title) ?? untitled;
  const description = nonEmpty(prompt?.description);
  const subject = subjectOf(toolCall, prompt);
  return {
    sessionId,
    title,
    ...(description === undefined ? {} : { description }),
    ...(subject === undefined ? {} : { subject }),
    options: options as V2.RequestPermissionRequest['options'],
    ...(meta === undefined ? {} : { _meta: meta }),
  };
}

/**
 * The subject a v2 editor is shown: a v2 agent's own (a command as a command; none when it named
 * none, the tool call then being warden's stand-in), else the tool call.
 */
function subjectOf(toolCall: ToolCallUpdate, prompt: KeptV2Prompt | undefined): V2.RequestPermissionSubject | undefined {
  if (prompt !== undefined && prompt.subject === undefined) return undefined;
  if (prompt?.subject === 'command') {
    // The agent's own subject, whole: its terminal, its _meta, no stand-in tool call id.
    const kept = prompt.command;
    if (typeof kept === 'object' && kept !== null && typeof kept.command === 'string' && typeof kept.cwd === 'string') return { type: 'command', ...kept } as V2.RequestPermissionSubject;
    const input = toolCall.rawInput as { command?: unknown; cwd?: unknown } | null | undefined;
    if (typeof input?.command === 'string' && typeof input.cwd === 'string') {
      return { type: 'command', command: input.command, cwd: input.cwd, toolCallId: toolCall.toolCallId } as V2.RequestPermissionSubject;
    }
  }
  const { content, ...fields } = toolCall;
  const subjectCall = { ...fields, ...(content === undefined || content === null ? {} : { content: content.map((item: ToolCallContent) => toolContentToV2(item)) }) };
  return { type: 'tool_call', toolCall: subjectCall } as V2.RequestPermissionSubject;
}

function nonEmpty(text: string | null | undefined): string | undefined {
  return typeof text === 'string' && text !== '' ? text : undefined;
}
