/**
 * The real ACP adapters the end-to-end specs run behind warden (`npm run agents:install`), each
 * with the pinned CLI it drives and the fake model server it talks to on 127.0.0.1:
 * @agentclientprotocol/claude-agent-acp 0.101.0 over Claude Code 2.1.332 (fake Anthropic), and
 * @agentclientprotocol/codex-acp 2.6.0 over Codex 0.171.0 (fake OpenAI).
 */
import { startFakeAnthropic } from './fake-anthropic-server.js';
import { startFakeOpenAI } from './fake-openai-server.js';
import type { FakeModelServer } from './local-model-server.js';
import { claudeBin, claudeEnv, codexBin, codexEnv, writeCodexHome, type Workspace } from './real-agents-harness.js';

/** One real adapter: how warden names it, where it is, what it needs. */
export interface RealAcpAdapter {
  /** warden's `--agent` name. */
  readonly agent: 'claude-acp' | 'codex-acp';
  /** The adapter's bin in the agents' directory (also a word of its process's command line). */
  readonly bin: 'claude-agent-acp' | 'codex-acp';
  /** warden's variable naming the adapter's path (src/adapters/registry.ts). */
  readonly pathVar: string;
  /** The pinned CLI it drives. */
  readonly cli: string;
  readonly server: () => Promise<FakeModelServer>;
  /** The adapter's environment (warden's `--env`), its CLI pointed at the pinned binary. */
  readonly env: (server: FakeModelServer, space: Workspace) => Record<string, string>;
  /** The fake server's answer to "hello". */
  readonly hello: string;
}

export const claudeAgentAcp: RealAcpAdapter = {
  agent: 'claude-acp',
  bin: 'claude-agent-acp',
  pathVar: 'CLAUDE_AGENT_ACP_PATH',
  cli: claudeBin,
  server: startFakeAnthropic,
  // IS_SANDBOX=1: as root, the adapter's bypass mode refuses to start the CLI without it.
  env: (server, space) => ({ ...claudeEnv(server.url, space), CLAUDE_CODE_EXECUTABLE: claudeBin, IS_SANDBOX: '1' }),
  hello: 'Hello from the fake Anthropic server.',
};

export const codexAcp: RealAcpAdapter = {
  agent: 'codex-acp',
  bin: 'codex-acp',
  pathVar: 'CODEX_ACP_PATH',
  cli: codexBin,
  server: startFakeOpenAI,
  env: (server, space) => ({ ...codexEnv(space, writeCodexHome(space, server.url)), CODEX_PATH: codexBin }),
  hello: 'Hello from the fake OpenAI server.',
};
