/**
 * What becomes of a turn its agent process died under (`--on-crash`, issue 32): failed at once
 * (`fail`, `agent_crashed`), or, once the restarted process resumed the conversation, carried on
 * in the same editor request: the prompt sent again (`retry`, and `continue` when no tool call
 * had started), or the agent told what the crash cut and asked to go on from its history
 * (`continue`). At most `maxContinuations` continuations a turn; then it fails as with `fail`.
 */

import type { AgentRequestEvent } from '../protocol/native-agent.js';

/** A prompt its agent process's death cut, waiting for the restarted agent: its request, its continuation's number, the exit, whether it is sent again as is. */
export interface CutPrompt {
  readonly request: AgentRequestEvent;
  readonly continuations: number;
  readonly exit: string;
  readonly resend: boolean;
  /** How many times a rate limit sent this prompt again (rate-limit.ts), when one did. */
  readonly rateLimitRetries?: number;
  /**
   * The restarted agent could not resume its conversation and began a new one (Claude Code killed
   * in its first turn, before anything was saved): the continuation is the whole prompt again,
   * after a note of the tool calls the crash cut, never "go on from your history".
   */
  readonly freshConversation?: true;
}

/** `--on-crash`: what a turn cut by its agent process's death becomes. */
export type OnCrash = 'continue' | 'retry' | 'fail';

/** The `--on-crash` choices, for the flag and its checks. */
export const onCrashChoices: readonly OnCrash[] = ['continue', 'retry', 'fail'];

/** How many times one turn is continued after crashes before it fails (`--max-continuations`). */
export const defaultMaxContinuations = 2;

/** A crash policy, as an agent runs with it. */
export interface CrashPolicy {
  readonly onCrash: OnCrash;
  /** At most this many continuations a turn; the next crash fails it (`agent_crashed`). */
  readonly maxContinuations: number;
}

/** A crash policy as given (`--on-crash`, `--max-continuations`, `createHost`'s `agentOptions`): each part optional. */
export interface CrashChoice {
  readonly onCrash?: OnCrash;
  readonly maxContinuations?: number;
  /** `--rate-limit-retries`: how many times a turn that hit a rate limit is sent again (rate-limit.ts; default 3, 0: never). */
  readonly rateLimitRetries?: number;
}

/** The parts of `given` that are set. */
export function crashChoiceOf(given: { readonly onCrash?: OnCrash | undefined; readonly maxContinuations?: number | undefined; readonly rateLimitRetries?: number | undefined }): CrashChoice {
  return {
    ...(given.onCrash !== undefined ? { onCrash: given.onCrash } : {}),
    ...(given.maxContinuations !== undefined ? { maxContinuations: given.maxContinuations } : {}),
    ...(given.rateLimitRetries !== undefined ? { rateLimitRetries: given.rateLimitRetries } : {}),
  };
}

/**
 * The policy of an agent: `onCrash` as given, else `continue` for an agent that resumes its
 * conversation after a restart (Claude's `--resume`, Codex's `thread/resume`: a CLI session
 * definition with `resumes`) and `fail` for one that starts afresh (there is no history to
 * continue). A native ACP agent resumes when it advertises `session/resume` or `loadSession`
 * (passthrough/cut-prompts.ts); the demo agent keeps no conversation and always fails.
 */
export function crashPolicyOf(resumes: boolean, given: CrashChoice = {}): CrashPolicy {
  return { onCrash: given.onCrash ?? (resumes ? 'continue' : 'fail'), maxContinuations: given.maxContinuations ?? defaultMaxContinuations };
}
