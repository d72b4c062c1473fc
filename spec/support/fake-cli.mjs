#!/usr/bin/env node
// A fake agent CLI for port tests: NDJSON JSON-RPC on stdio, with a method per fault.
// Exits on stdin EOF (as agent CLIs do) unless started with --ignore-eof.
// Usage: node fake-cli.mjs [--ignore-eof] [--stderr TEXT] [--banner LINE]
import { spawn } from 'node:child_process';
import { readStdinLines, writeStdoutSync } from './stdio-lines.mjs';

const args = process.argv.slice(2);
const ignoreEof = args.includes('--ignore-eof');
const flag = (name) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};

// Synchronous writes: what a test sends before exit must be in the pipe before exit.
const out = writeStdoutSync;
const send = (message) => out(`${JSON.stringify(message)}\n`);
const reply = (id, result) => send({ jsonrpc: '2.0', id, result });

if (flag('--stderr')) process.stderr.write(`${flag('--stderr')}\n`);
if (flag('--banner')) out(`${flag('--banner')}\n`);

/** What `leak` keeps. */
const leaked = [];

const methods = {
  echo: (params) => params,
  env: () => ({ env: process.env }),
  pid: () => ({ pid: process.pid, pgid: process.pid }),
  exit: (params, id) => {
    reply(id, { exiting: params.code ?? 0 });
    process.exit(params.code ?? 0);
  },
  crash: () => {
    process.stderr.write('fatal: the fake agent crashed on purpose\n');
    process.exit(3);
  },
  hang: () => undefined,
  stream: (params, id) => {
    for (let index = 0; index < (params.count ?? 10); index++) send({ jsonrpc: '2.0', method: 'update', params: { index } });
    reply(id, { streamed: params.count ?? 10 });
  },
  garbage: (params, id) => {
    out('this is not json\n');
    out('{"jsonrpc":"2.0","method":"half\n');
    out('\r\n\n');
    out('[1,2\n');
    reply(id, { garbage: 3 });
  },
  huge: (params) => {
    // One line of params.bytes bytes, written in pieces.
    const piece = 'x'.repeat(64 * 1024);
    out('{"jsonrpc":"2.0","method":"huge","params":"');
    let left = params.bytes;
    while (left > 0) {
      const size = Math.min(left, piece.length);
      out(piece.slice(0, size));
      left -= size;
    }
    out('"}\n');
    return undefined;
  },
  bigFinal: (params) => {
    // params.lines lines of params.width bytes, then exit at once.
    const filler = 'y'.repeat(params.width ?? 1000);
    let chunk = '';
    for (let index = 0; index < params.lines; index++) {
      chunk += `{"jsonrpc":"2.0","method":"line","params":{"index":${index},"filler":"${filler}"}}\n`;
      if (chunk.length > 256 * 1024) {
        out(chunk);
        chunk = '';
      }
    }
    out(chunk);
    out(JSON.stringify({ jsonrpc: '2.0', method: 'last', params: { lines: params.lines } }) + '\n');
    process.exit(0);
  },
  partialExit: (params) => {
    out(params.text);
    process.exit(params.code ?? 0);
  },
  grandchild: () => {
    // A tool the agent runs: same process group, outlives the agent unless the group is killed.
    const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
    return { pid: child.pid };
  },
  setsidGrandchild: () => {
    // A tool in its own session and process group (Claude Code's Bash commands): a group kill misses it.
    const child = spawn('setsid', ['sleep', '300'], { stdio: 'ignore' });
    return { pid: child.pid };
  },
  leak: (params) => {
    // Memory kept and touched at params.mbPerSecond (default 50), every 100 ms, up to params.upToMb (default: no end).
    const step = Math.max(1, Math.round((params.mbPerSecond ?? 50) / 10)) * 1024 * 1024;
    const cap = (params.upToMb ?? Infinity) * 1024 * 1024;
    const timer = setInterval(() => {
      if (leaked.length * step >= cap) {
        clearInterval(timer);
        send({ jsonrpc: '2.0', method: 'leakDone', params: { mb: (leaked.length * step) / (1024 * 1024) } });
        return;
      }
      leaked.push(Buffer.alloc(step, 1));
    }, 100);
    return { leaking: true };
  },
  spin: (params, id) => {
    // 100% CPU and silent: answers, then loops without yielding (a hung CLI burning a core).
    reply(id, { spinning: true });
    const until = Date.now() + (params.seconds ?? 600) * 1000;
    while (Date.now() < until) Math.sqrt(Math.random());
    return undefined;
  },
  flood: (params) => {
    // params.count notifications as fast as possible.
    let chunk = '';
    for (let index = 0; index < params.count; index++) {
      chunk += `{"jsonrpc":"2.0","method":"tick","params":{"index":${index}}}\n`;
      if (chunk.length > 64 * 1024) {
        out(chunk);
        chunk = '';
      }
    }
    out(chunk);
    return { flooded: params.count };
  },
};

readStdinLines((line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    return;
  }
  const method = methods[request.method];
  if (!method) {
    send({ jsonrpc: '2.0', id: request.id ?? null, error: { code: -32601, message: `Method not found: ${request.method}` } });
    return;
  }
  const result = method(request.params ?? {}, request.id);
  if (result !== undefined && request.id !== undefined) reply(request.id, result);
}, () => {
  if (!ignoreEof) process.exit(0);
});
if (ignoreEof) {
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => {});
  setInterval(() => {}, 1 << 30);
}
