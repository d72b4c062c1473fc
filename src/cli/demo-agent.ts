/**
 * `warden demo-agent`: the built-in demo agent alone, served as an ACP agent on stdio with
 * no host around it. `warden demo` runs it as a real subprocess to inject faults into;
 * `DEMO_WORD_DELAY_MS` sets the pause between streamed words.
 */
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { agentServerLogic } from '../acp/agent-server.js';
import { demoAgent } from '../acp/demo-agent.js';
import type { NativeAgent } from '../acp/native-agent.js';
import { createAcpPassthrough } from '../adapters/acp-passthrough.js';
import { stdioTransport } from '../jsonrpc/stdio-transport.js';

/**
 * The demo agent as a real, supervised subprocess (`warden demo-agent` behind a passthrough):
 * what `warden demo` and `warden chaos --agent demo` inject faults into.
 */
export function demoAgentProcess(options: { readonly wordDelayMs?: number; readonly hangAfterMs?: number; readonly restart?: { readonly intensity: number; readonly period: number } } = {}): NativeAgent {
  const main = fileURLToPath(new URL(`./main.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url));
  return createAcpPassthrough({
    name: 'demo',
    executable: process.execPath,
    args: [...process.execArgv, main, 'demo-agent'],
    env: { DEMO_WORD_DELAY_MS: String(options.wordDelayMs ?? 30) },
    restart: { intensity: options.restart?.intensity ?? 3, period: options.restart?.period ?? 30_000, backoff: { minDelay: 100, maxDelay: 400 } },
    ...(options.hangAfterMs ? { port: { watchdog: { idleMs: options.hangAfterMs } } } : {}),
  });
}

/** Serves the demo agent until stdin closes; resolves with the exit status. */
export function runDemoAgent(): Promise<number> {
  const delay = Number(process.env.DEMO_WORD_DELAY_MS ?? 40);
  const agent = demoAgent({ wordDelayMs: Number.isFinite(delay) && delay >= 0 ? delay : 40 });
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
