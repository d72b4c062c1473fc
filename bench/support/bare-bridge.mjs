#!/usr/bin/env node
// The least a stdio <-> WebSocket bridge can do, for bench/serve-relay.ts to set warden's bridge
// beside: each stdin line one text frame to the daemon, each frame one stdout line; no parsing,
// no keepalive, no flow control, no drain of answers at the end of input. What is left is the
// cost of a process on the path: a wake-up, a socket read, a pipe write per update.
// Usage: bare-bridge.mjs URL TOKEN_FILE
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';

const [url, tokenFile] = process.argv.slice(2);
const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` }, perMessageDeflate: false });
let pending = '';
socket.on('open', () => {
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      socket.send(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
    }
  });
  process.stdin.on('end', () => socket.close());
});
socket.on('message', (data) => process.stdout.write(`${data}\n`));
socket.on('close', () => process.exit(0));
socket.on('error', (error) => {
  process.stderr.write(`bare-bridge: ${error.message}\n`);
  process.exit(1);
});
