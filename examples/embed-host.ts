/**
 * Embedding acp-warden in about 20 lines: a host, a session on the demo agent, a streamed prompt,
 * the journal, the supervision tree. Swap `agent: 'demo'` for 'claude' or 'codex' when they
 * are installed.
 *
 *   npx tsx examples/embed-host.ts
 */
import { createHost } from '../src/index.js';

const host = createHost({
  store: ':memory:', // or a file: sessions survive a restart of the program
  permission: (request) => {
    // Once, never "always": for Claude Code an always-allow switches the session to accepting edits.
    const once = request.options.find((option) => option.kind === 'allow_once');
    return once ? { outcome: 'selected', optionId: once.optionId } : { outcome: 'cancelled' };
  },
});
host.on((event) => {
  if (event.type === 'session.state') console.error(`[session ${event.sessionId}: ${event.state}]`);
});
const session = await host.newSession({ agent: 'demo', cwd: process.cwd() });
const run = session.prompt('please run the tool');
for await (const update of run) {
  if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') process.stdout.write(update.content.text);
  // acp-warden's own words (the agent restarted, is back): apart from the agent's.
  if (update.sessionUpdate === 'notice') console.error(`[acp-warden ${update.severity}] ${update.title}`);
}
console.log(`\nstop reason: ${(await run.result).stopReason}`);
console.log(`journal entries: ${(await host.journal.entries(session.sessionId)).length}`);
console.log(JSON.stringify(host.tree(), null, 1));
await host.stop();
