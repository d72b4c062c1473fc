/**
 * An agent's permission request (v1-shaped, as the core carries it) as a v2 editor reads it:
 * v2 asks with a `title` of its own and names what is asked about as a `subject` (here the
 * tool call, its content in v2's shapes). The options and the answer are the same in both.
 */
import type { RequestPermissionRequest, ToolCallContent } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { toolContentToV2 } from './v2-updates.js';

/** What a v2 editor is shown when the tool call has no title. */
const untitled = 'Permission requested';

/** `params` of a v1 `session/request_permission` as v2's. */
export function permissionRequestToV2(params: RequestPermissionRequest): V2.RequestPermissionRequest {
  const { toolCall, options, sessionId, _meta } = params;
  const { content, ...fields } = toolCall;
  const subjectCall = { ...fields, ...(content === undefined || content === null ? {} : { content: content.map((item: ToolCallContent) => toolContentToV2(item)) }) };
  return {
    sessionId,
    title: typeof toolCall.title === 'string' && toolCall.title !== '' ? toolCall.title : untitled,
    subject: { type: 'tool_call', toolCall: subjectCall } as V2.RequestPermissionSubject,
    options: options as V2.RequestPermissionRequest['options'],
    ...(_meta === undefined || _meta === null ? {} : { _meta }),
  };
}
