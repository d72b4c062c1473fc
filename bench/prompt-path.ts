/**
 * Actors on the prompt path (issue 29's goal: at most 3 between the editor's connection and
 * the port, each way, on every path), counted from the inspection stream by
 * spec/support/prompt-path.ts (spec/host/prompt-path.spec.ts asserts the goal).
 * Prints the actors of each path; asserts nothing.
 */
import { measurePromptPath, type PromptPathKind } from '../spec/support/prompt-path.js';

const titles: Record<PromptPathKind, string> = {
  stdio: 'stdio: the SDK client to the agent server, as `warden acp` serves it; fake Claude Code',
  serve: 'serve: a WebSocket client of the hub, as `warden serve` serves it; fake Claude Code',
  native: 'native ACP: stdio to an `acp:` agent (the SDK agent) through the passthrough',
  claude: 'the embedding API (createHost, host.newSession); fake Claude Code',
  codex: 'the embedding API (createHost, host.newSession); fake Codex',
};

export async function promptPath(): Promise<void> {
  console.log('\n## Actors on the prompt path (one measured prompt after a warm-up)');
  console.log('| path | down (editor → agent) | up (agent → editor) | events over the turn |');
  console.log('|---|---|---|---|');
  for (const path of Object.keys(titles) as PromptPathKind[]) {
    const measured = await measurePromptPath(path);
    console.log(`| ${titles[path]} | ${measured.down.length}: ${measured.down.join(' → ')} | ${measured.up.length}: ${measured.up.join(' → ')} | ${measured.events} |`);
  }
}
