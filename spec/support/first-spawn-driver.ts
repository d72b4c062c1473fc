// `node --import tsx spec/support/first-spawn-driver.ts MODE`: the first port of a fresh
// process (execa not loaded yet), driven as an owner does, one JSON line of facts on stdout.
// MODE `write`: a request written right after start, answered, then a graceful stop.
// MODE `stop`: a graceful stop asked right after start. MODE `kill`: the actor stopped at once.
// MODE `busy`: told busy right after start, under a 300 ms watchdog; the CLI (silent) must be
// killed as hung (the driver gives up after 20 s).
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { portLogic, writeToPort, type PortEmitted } from '../../src/port/index.js';
import { SHUTDOWN_EVENT } from '../../src/supervision/events.js';

const fakeCli = fileURLToPath(new URL('./fake-cli.mjs', import.meta.url));
const mode = process.argv[2];
const watchdog = mode === 'busy' ? { watchdog: { idleMs: 300, startupMs: 300 } } : {};
const actor = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli], ...watchdog } });
const emitted: PortEmitted[] = [];
actor.on('*', (event: PortEmitted) => emitted.push(event));
const ended = new Promise<{ output?: unknown; error?: string }>((resolve) => {
  actor.subscribe({ complete: () => resolve({ output: actor.getSnapshot().output }), error: (error) => resolve({ error: String(error) }) });
});
actor.start();
const pids = () => emitted.flatMap((event) => (event.type === 'port.spawned' ? [event.pid] : []));
let answer: unknown;
if (mode === 'write') {
  const answered = new Promise((resolve) => actor.on('port.message', (event) => resolve(event.message)));
  await writeToPort(actor, { message: { jsonrpc: '2.0', id: 1, method: 'pid', params: {} } });
  answer = await answered;
  actor.send({ type: SHUTDOWN_EVENT });
} else if (mode === 'busy') {
  actor.send({ type: 'port.busy', busy: true });
  setTimeout(() => actor.send({ type: SHUTDOWN_EVENT }), 20_000).unref();
} else if (mode === 'stop') {
  actor.send({ type: SHUTDOWN_EVENT });
} else {
  actor.stop();
}
const end = mode === 'kill' ? { stopped: actor.getSnapshot().status } : await ended;
// Long enough for a spawn that was (wrongly) still under way to have happened.
await new Promise((resolve) => setTimeout(resolve, 1000));
process.stdout.write(`${JSON.stringify({ answer, spawned: pids(), end, status: actor.getSnapshot().status })}\n`);
