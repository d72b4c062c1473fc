/**
 * The words of a continuation (issue 32): what warden sends an agent whose process died
 * mid-turn, once the restarted process resumed the conversation, and the notice the editor
 * gets. Neither Claude Code nor Codex continues a resumed turn on its own, both drop the text
 * they were streaming, and both close a cut tool call with a marker that does not say whether
 * it ran ("outcome unknown", "aborted"); a SIGTERM'd Codex even tells its model the *user*
 * interrupted. So the text says it was a crash and a restart by the host, what warden knows of
 * each cut call, and asks the agent to check before repeating anything (docs/recovery.md).
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';
import type { CutTool, TurnTools } from './cut-turn.js';
import type { AgentRequestEvent } from '../protocol/native-agent.js';
import type { CutPrompt } from './crash-policy.js';

/** The title of the notice that says a turn was continued after a crash: its answer starts again. */
export const CONTINUED_NOTICE_TITLE = 'Answer restarted';

/** The longest part of the user's prompt quoted in a continuation, in characters. */
const promptChars = 600;

/** What warden knows of one cut tool call, as a line of the continuation. */
function toolLine(tool: CutTool): string {
  switch (tool.state) {
    case 'asked':
      return `- ${tool.title}: its permission request was never answered, so it did not run.`;
    case 'refused':
      return `- ${tool.title}: the permission was refused, so it did not run.`;
    case 'started':
      return `- ${tool.title}: it was approved or running when the process died, so it may have partly run; its outcome is unknown.`;
    case 'completed':
      return `- ${tool.title}: it completed before the crash${tool.result ? `; its result began: ${tool.result}` : ''}.`;
    case 'failed':
      return `- ${tool.title}: it failed before the crash${tool.result ? `: ${tool.result}` : ''}.`;
  }
}

/** The text of a prompt's content blocks (its other blocks named), cut to its start. */
export function promptTextOf(prompt: readonly ContentBlock[]): string {
  const text = prompt
    .map((block) => (block.type === 'text' ? block.text : block.type === 'resource_link' ? `[${block.uri}]` : `[${block.type}]`))
    .join('\n')
    .trim();
  return text.length > promptChars ? `${text.slice(0, promptChars)}…` : text;
}

/**
 * The user message that continues a turn whose tool calls the crash cut: from the host, not the
 * user; the calls and what warden knows of each; check the state, then go on from the history.
 */
export function continuationText(agent: string, exit: string, tools: TurnTools, prompt: readonly ContentBlock[]): string {
  return [
    `[acp-warden] The ${agent} process crashed (${exit}) during your previous turn and was restarted by the host (acp-warden) with this conversation resumed. This message is from the host, not the user: nobody interrupted you on purpose.`,
    'Tool calls cut by the crash, as the host saw them:',
    ...tools.map(toolLine),
    'Your history may mark these calls as interrupted or aborted without saying whether they ran. Check the current state (files, processes) before repeating any action, then continue the task from where your history shows and finish your answer to the user\'s request:',
    promptTextOf(prompt),
  ].join('\n');
}

/**
 * The note before the whole prompt when the restarted agent began a new conversation: it has no
 * history of the cut turn, but the calls the crash cut may have changed the workspace.
 */
export function freshConversationNote(agent: string, exit: string, tools: TurnTools): string {
  return [
    `[acp-warden] The ${agent} process crashed (${exit}) while answering the request below and was restarted by the host (acp-warden), but its conversation could not be resumed (nothing of it had been saved yet): this is a new conversation, and the request below is the user's, sent again by the host.`,
    'Before the crash it had started these tool calls, as the host saw them:',
    ...tools.map(toolLine),
    'They may have changed the workspace. Check the current state (files, processes) before repeating any action, then answer the request:',
  ].join('\n');
}

/**
 * What continues a cut prompt: its request again (`resend`, or a new conversation without cut
 * tool calls), the whole prompt after a note of the cut calls (a new conversation), or the same
 * request with the continuation text as its prompt (the conversation resumed).
 */
export function continuationRequest(agent: string, cut: CutPrompt, tools: TurnTools): AgentRequestEvent {
  if (cut.resend || (cut.freshConversation && tools.length === 0)) return cut.request;
  const prompt = cut.request.params.prompt as ContentBlock[];
  if (cut.freshConversation) return { ...cut.request, params: { ...cut.request.params, prompt: [{ type: 'text', text: freshConversationNote(agent, cut.exit, tools) }, ...prompt] } };
  return { ...cut.request, params: { ...cut.request.params, prompt: [{ type: 'text', text: continuationText(agent, cut.exit, tools, prompt) }] } };
}

/** The notice's description: why the answer starts again, and what the agent was sent. */
export function continuedNoticeText(agent: string, exit: string, continuation: number, max: number, resent: boolean): string {
  const what = resent ? 'the prompt is sent again' : 'it is asked to continue from its history after the tool calls the crash cut';
  return `${agent} stopped during the prompt (${exit}); acp-warden restarts it, resumes the conversation, and ${what} (continuation ${continuation} of at most ${max}). The text streamed before the crash is lost to the agent: its answer starts again after this notice.`;
}
