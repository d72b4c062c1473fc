/**
 * `warden demo-agent`: the built-in demo agent alone, served as an ACP agent on stdio with
 * no host around it. `warden demo` runs it as a real subprocess to inject faults into;
 * `DEMO_WORD_DELAY_MS` sets the pause between streamed words.
 */
import { createActor } from 'xstate';
import { agentServerLogic } from '../acp/agent-server.js';
import { demoAgent } from '../acp/demo-agent.js';
import { stdioTransport } from '../jsonrpc/stdio-transport.js';

/** Serves the demo agent until stdin closes; resolves with the exit status. */
export function runDemoAgent(): Promise<number> {
  // Unset or not a number ≥ 0: the demo agent's own default.
  const text = process.env.DEMO_WORD_DELAY_MS;
  const delay = Number(text);
  const agent = demoAgent(text !== undefined && Number.isFinite(delay) && delay >= 0 ? { wordDelayMs: delay } : {});
  const server = createActor(agentServerLogic, { input: { transport: stdioTransport(), agent, name: 'editor' } });
  return new Promise((resolve) => {
    server.subscribe({
      complete: () => resolve(0),
      error: (error) => {
        process.stderr.write(`warden demo-agent: ${error instanceof Error ? error.message : String(error)}\n`);
        resolve(1);
      },
    });
    server.start();
  });
}
