/**
 * An ACP adapter left running with its inner CLI dead (claude-agent-acp #338): the adapter
 * process lives, but every prompt is answered with the CLI's death, so a restart of the adapter
 * is the only way on. Warden treats such an answer as a crash of the agent (exit reason
 * `inner_cli_dead`) and lets the crash policy continue the prompt (crash-policy.ts). Pure: the
 * patterns, matched on the error's `message`, `data.details` and `data.message`:
 *
 * - "Claude Code process exited with code N" / "… process exited …" / "… process terminated …"
 *   (claude-agent-acp and claude-code-acp, `-32603` with `data.details`);
 * - "Query closed before response received" (the Claude Agent SDK's query ended under it);
 * - "ProcessTransport is not ready" / "Cannot write to terminated process" (the SDK's transport
 *   to a dead CLI).
 *
 * A rate limit or an ordinary tool or model error never matches: only the death of the CLI.
 */

/** The texts of an inner CLI's death, as adapters report it. */
export const innerCliDeathPatterns: readonly RegExp[] = [
  /\bprocess (?:exited|terminated)(?: unexpectedly)?(?: with (?:exit )?code -?\d+)?/iu,
  /query closed before response received/iu,
  /processtransport is not ready/iu,
  /cannot write to terminated process/iu,
];

/** The matched text of an ACP error that reports its adapter's inner CLI dead, else undefined. */
export function innerCliDeathOf(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const fields = error as Record<string, unknown>;
  const data = fields.data !== null && typeof fields.data === 'object' ? (fields.data as Record<string, unknown>) : {};
  for (const text of [data.details, data.message, fields.message]) {
    if (typeof text !== 'string') continue;
    for (const pattern of innerCliDeathPatterns) {
      const found = pattern.exec(text);
      if (found) return text.length > 200 ? `${text.slice(0, 200)}…` : text;
    }
  }
  return undefined;
}
