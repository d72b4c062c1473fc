/**
 * Actors on the prompt path (issue 15's goal: at most 3 between the editor's connection and
 * the port, each way), counted from the inspection stream by bench/support/prompt-path.ts.
 * Prints the actors; asserts nothing.
 */
import { measurePromptPath } from './support/prompt-path.js';

export async function promptPath(): Promise<void> {
  console.log('\n## Actors on the prompt path (createHost, fake Claude Code, second prompt of a session)');
  const path = await measurePromptPath();
  console.log(`down (editor → CLI): ${path.down.length} actors: ${path.down.join(' → ')}`);
  console.log(`up   (CLI → editor): ${path.up.length} actors: ${path.up.join(' → ')}`);
  console.log(`events delivered over the turn: ${path.events}`);
}
