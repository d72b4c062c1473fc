/**
 * Records the raw ACP v2 exchange of the real adapters, claude-agent-acp 0.101.0 and codex-acp
 * 2.6.0, with the SDK 2.4.0 v2 client (`@agentclientprotocol/sdk/experimental/v2`) as the editor
 * and no warden in between, against the fake model servers: a text turn and a tool call that asks
 * permission (allowed once). Writes spec/fixtures/acp-v2-<adapter>-<scenario>.ndjson, one line per
 * message in the order seen, `{"dir":"send"|"recv","t_ms","msg"}` like the other acp-*.ndjson
 * fixtures (send = client to agent), with the workspace rewritten to /home/user(/project).
 *
 * Needs the adapters from `npm run agents:install` (WARDEN_AGENTS_DIR as there). Run:
 *   node --import tsx spec/support/record-acp-v2.ts [claude-agent-acp|codex-acp ...]
 * spec/fixtures/acp-v2-fixtures.spec.ts parses every recorded message with the SDK's v2 schemas.
 */
import * as v2 from '@agentclientprotocol/sdk/experimental/v2';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { startFakeAnthropic, type FakeModelServer } from './fake-anthropic-server.js';
import { startFakeOpenAI } from './fake-openai-server.js';
import { agentsBin, claudeBin, claudeEnv, codexBin, codexEnv, repo, workspace, writeCodexHome, type Workspace } from './real-agents-harness.js';

/** One recorded line. */
interface Recorded {
  dir: 'send' | 'recv';
  t_ms: number;
  msg: unknown;
}

interface Adapter {
  readonly name: 'claude-agent-acp' | 'codex-acp';
  readonly server: () => Promise<FakeModelServer>;
  /** The adapter's environment against `server`, in `space`. */
  readonly env: (server: FakeModelServer, space: Workspace) => Record<string, string>;
  /** The prompt text that makes the fake model call a tool needing permission. */
  readonly toolPrompt: string;
  /** The config option (id, value) that makes the tool ask, set before the tool prompt. */
  readonly askMode?: { configId: string; value: string };
}

const adapters: Adapter[] = [
  {
    name: 'claude-agent-acp',
    server: startFakeAnthropic,
    // The pinned Claude Code, not the SDK's bundled CLI.
    // IS_SANDBOX=1: as root, the adapter's bypass mode refuses to start without it.
    env: (server, space) => ({ ...claudeEnv(server.url, space), CLAUDE_CODE_EXECUTABLE: claudeBin, IS_SANDBOX: '1' }),
    toolPrompt: 'TOOL:write new.txt',
    // claude-agent-acp starts in mode "auto" (no prompts): "default" asks before an edit.
    askMode: { configId: 'mode', value: 'default' },
  },
  {
    name: 'codex-acp',
    server: startFakeOpenAI,
    // The pinned Codex; codex-acp's own dependency (@openai/codex ^0.166) is not used.
    env: (server, space) => ({ ...codexEnv(space, writeCodexHome(space, server.url)), CODEX_PATH: codexBin }),
    // Every codex-acp mode runs Codex with approvalPolicy on-request: it asks only for a command
    // that requests to leave the sandbox (and Codex 0.171 refuses approval_policy "untrusted").
    toolPrompt: 'TOOL:escalate touch new.txt',
    // The default mode ("agent") has a model review the request instead of asking the user.
    askMode: { configId: 'mode', value: 'workspace-write' },
  },
];

/** Passes bytes through and hands each complete line to `onLine`. */
function lineTap(onLine: (line: string) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let buffered = '';
  return new TransformStream({
    transform(chunk, controller) {
      buffered += decoder.decode(chunk, { stream: true });
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end).trim();
        buffered = buffered.slice(end + 1);
        if (line !== '') onLine(line);
      }
      controller.enqueue(chunk);
    },
  });
}

/** The adapter as a child process, its stdio tapped into `log`. */
function startAdapter(adapter: Adapter, env: Record<string, string>, log: Recorded[], started: number): { child: ChildProcessWithoutNullStreams; stream: v2.Stream } {
  const child = spawn(join(agentsBin, adapter.name), [], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  child.stderr.resume();
  const record = (dir: Recorded['dir']) => (line: string) => log.push({ dir, t_ms: Date.now() - started, msg: JSON.parse(line) });
  const sendTap = lineTap(record('send'));
  void sendTap.readable.pipeTo(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>).catch(() => {});
  const input = (Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>).pipeThrough(lineTap(record('recv')));
  return { child, stream: v2.ndJsonStream(sendTap.writable, input) };
}

/** Runs `scenario` against a fresh adapter process and returns what crossed its stdio. */
async function record(adapter: Adapter, scenario: 'text' | 'tool-permission'): Promise<Recorded[]> {
  const server = await adapter.server();
  const space = workspace(`warden-v2-record-${adapter.name}-`);
  const project = space.project();
  const log: Recorded[] = [];
  const started = Date.now();
  const { child, stream } = startAdapter(adapter, adapter.env(server, space), log, started);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const app = v2.client().onRequest('session/request_permission', ({ params }) => {
      const allow = params.options.find((option) => option.kind === 'allow_once');
      return { outcome: allow ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' } };
    });
    await app.connectWith(stream, async (agent) => {
      await agent.request('initialize', { protocolVersion: 2, info: { name: 'warden-v2-recorder', version: '1.0.0' }, capabilities: {} });
      const session = await agent.buildSession(project).start();
      try {
        if (scenario === 'text') {
          await session.prompt('hello');
          await session.readTextUntilIdle();
        } else {
          if (adapter.askMode) await session.setConfigOption({ configId: adapter.askMode.configId, type: 'id', value: adapter.askMode.value } as never);
          await session.prompt(adapter.toolPrompt);
          await session.readTextUntilIdle();
        }
      } finally {
        session.dispose();
      }
      await agent.request('session/close', { sessionId: session.sessionId }).catch(() => {});
    });
  } finally {
    // The adapters ignore stdin EOF (fixtures README): end them, and what they started (codex-acp's
    // app-server), as one process group.
    process.kill(-(child.pid as number), 'SIGTERM');
    await exited;
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // the group is gone already
    }
    await server.close();
  }
  const text = JSON.stringify(log).replaceAll(project, '/home/user/project').replaceAll(space.home, '/home/user').replaceAll(space.base, '/tmp/workspace');
  rmSync(space.base, { recursive: true, force: true, maxRetries: 5 });
  return JSON.parse(text) as Recorded[];
}

const wanted = process.argv.slice(2);
for (const adapter of adapters.filter((entry) => wanted.length === 0 || wanted.includes(entry.name))) {
  for (const scenario of ['text', 'tool-permission'] as const) {
    const started = Date.now();
    const log = await record(adapter, scenario);
    const file = join(repo, 'spec', 'fixtures', `acp-v2-${adapter.name}-${scenario}.ndjson`);
    writeFileSync(file, `${log.map((line) => JSON.stringify(line)).join('\n')}\n`);
    process.stdout.write(`${adapter.name} ${scenario}: ${log.length} messages in ${Date.now() - started} ms -> ${file}\n`);
  }
}
