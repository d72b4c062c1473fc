/**
 * A host process for the "host killed with SIGKILL" test: it starts two ports, prints their
 * pids (and a grandchild's) as one JSON line, then idles until killed.
 * - `polite`: a CLI that exits on stdin EOF, with a grandchild (a tool) in its group;
 * - `stubborn`: a CLI that ignores EOF, SIGTERM and SIGHUP: only SIGKILL of its group ends it.
 */
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { portLogic, reaperPid, writeToPort } from '../../src/port/index.js';

const fakeCli = fileURLToPath(new URL('./fake-cli.mjs', import.meta.url));

const polite = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli] } }).start();
const stubborn = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli, '--ignore-eof'] } }).start();

let grandchild: number | undefined;
polite.on('port.message', (event: { message: unknown }) => {
  const message = event.message as { id?: number; result?: { pid?: number } };
  if (message.id === 1) {
    grandchild = message.result?.pid;
    process.stdout.write(`${JSON.stringify({
      host: process.pid,
      polite: polite.getSnapshot().context.pid,
      stubborn: stubborn.getSnapshot().context.pid,
      grandchild,
      reaper: reaperPid(),
    })}\n`);
  }
});
await writeToPort(polite, { message: { jsonrpc: '2.0', id: 1, method: 'grandchild' } });
setInterval(() => {}, 1 << 30);
