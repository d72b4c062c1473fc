/**
 * A program that embeds warden with telemetry, as docs/embedding.md shows: `startTelemetry()`
 * of `acp-warden/telemetry`, `createHost({ telemetry })`, one session on the demo agent, one
 * prompt that runs the demo tool (allowed by the program's policy). Prints
 * `{ "sessionId": ..., "telemetry": true|false }` on stdout; the OTLP endpoint comes from the
 * environment. `EMBEDDER_OTEL=false` passes `otel: false`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowOnce, createHost } from '../../src/index.js';
import { startTelemetry } from '../../src/telemetry/index.js';

const cwd = mkdtempSync(join(tmpdir(), 'warden-embedder-'));
try {
  const telemetry = await startTelemetry({ otel: process.env.EMBEDDER_OTEL !== 'false', name: 'traced-embedder' });
  const host = createHost({ store: ':memory:', telemetry, agentOptions: { env: { DEMO_WORD_DELAY_MS: '1' } }, permission: (request) => allowOnce(request.options) });
  const session = await host.newSession({ agent: 'demo', cwd });
  const { stopReason } = await session.prompt('run the tool').result;
  await host.stop();
  await telemetry?.shutdown();
  process.stdout.write(`${JSON.stringify({ sessionId: session.sessionId, stopReason, telemetry: telemetry !== undefined })}\n`);
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
