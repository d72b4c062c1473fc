/**
 * Actors on the prompt path (issue 15's goal: at most 3 between the editor's connection and
 * the port, each way), counted from the inspection stream by spec/support/prompt-path.ts (spec/host/prompt-path.spec.ts asserts the count).
 * Prints the actors; asserts nothing.
 */
import { measurePromptPath } from '../spec/support/prompt-path.js';

export async function promptPath(): Promise<void> {
  for (const agent of ['claude', 'codex'] as const) {
    console.log(`\n## Actors on the prompt path (createHost, fake ${agent === 'claude' ? 'Claude Code' : 'Codex'}, a session's measured prompt)`);
    const path = await measurePromptPath(agent);
    console.log(`down (editor → CLI): ${path.down.length} actors: ${path.down.join(' → ')}`);
    console.log(`up   (CLI → editor): ${path.up.length} actors: ${path.up.join(' → ')}`);
    console.log(`events delivered over the turn: ${path.events}`);
  }
}
