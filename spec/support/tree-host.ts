/**
 * A host process for the "host exits with a live port" test: it starts a port whose CLI
 * starts a `setsid` tool (own session and group: a group kill misses it), prints the pids as
 * one JSON line once the tool is in the CLI's tree, then calls `process.exit(0)` without
 * stopping the port: only the exit hooks can end the CLI and its tool.
 */
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { portLogic, writeToPort } from '../../src/port/index.js';
import { walkTree } from '../../src/port/process-tree.js';

const fakeCli = fileURLToPath(new URL('./fake-cli.mjs', import.meta.url));

const port = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli, '--ignore-eof'] } }).start();
port.on('port.message', (event: { message: unknown }) => {
  const message = event.message as { id?: number; result?: { pid?: number } };
  if (message.id !== 1) return;
  const cli = port.getSnapshot().context.pid as number;
  const tool = message.result?.pid as number;
  const waitForTree = () => {
    if (!walkTree(cli).some((member) => member.pid === tool)) return void setTimeout(waitForTree, 10);
    process.stdout.write(`${JSON.stringify({ host: process.pid, cli, tool })}\n`, () => process.exit(0));
  };
  waitForTree();
});
await writeToPort(port, { message: { jsonrpc: '2.0', id: 1, method: 'setsidGrandchild' } });
setInterval(() => {}, 1 << 30);
