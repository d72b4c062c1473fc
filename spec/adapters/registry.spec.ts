import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentFor } from '../../src/adapters/agent-factory.js';
import { AgentUnavailableError, createRegistry, findAgent, probeAgent, probeAll, resolveExecutable, splitCommandLine } from '../../src/adapters/registry.js';

describe('agent registry', () => {
  let dir: string;
  let fakeClaude: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-registry-'));
    fakeClaude = join(dir, 'claude');
    writeFileSync(fakeClaude, '#!/bin/sh\necho "2.1.332 (Claude Code)"\n');
    chmodSync(fakeClaude, 0o755);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('knows the agents by name, and any ACP agent as acp:<command line>', () => {
    expect(findAgent('claude')).to.include({ kind: 'adapter' });
    expect(findAgent('gemini')).to.deep.include({ kind: 'acp', acpArgs: ['--acp'] });
    expect(findAgent('acp:my-agent --stdio "two words"')).to.deep.include({ kind: 'acp', acpArgs: ['--stdio', 'two words'] });
    expect(() => findAgent('nope')).to.throw(AgentUnavailableError, /Unknown agent "nope". Known agents: claude, codex/);
    expect(splitCommandLine(`a 'b c' "d e" f`)).to.deep.equal(['a', 'b c', 'd e', 'f']);
  });

  it('finds the executable from --agent-command, then the environment variable, then the PATH', () => {
    const entry = findAgent('claude');
    expect(resolveExecutable(entry, { agentCommand: fakeClaude, lookupEnv: { PATH: '' } })).to.equal(fakeClaude);
    expect(resolveExecutable(entry, { lookupEnv: { PATH: '', CLAUDE_CODE_EXECUTABLE: fakeClaude } })).to.equal(fakeClaude);
    expect(resolveExecutable(entry, { lookupEnv: { PATH: dir } })).to.equal(fakeClaude);
  });

  it("agentFor looks the executable up in warden's environment, not in the agent's own (--env)", () => {
    // Issue 14: `--env NAME=VALUE` (the agent's variables) used to replace the PATH it was looked up on.
    const lookupEnv = { PATH: dir };
    expect(() => agentFor('claude', { lookupEnv, env: { FAKE: '1' } })).to.not.throw();
    expect(() => agentFor('claude', { lookupEnv: { PATH: '' }, env: { PATH: dir } })).to.throw(AgentUnavailableError, /not found on the PATH/u);
    expect(() => agentFor('claude', { lookupEnv: { PATH: '', CLAUDE_CODE_EXECUTABLE: fakeClaude }, env: {} })).to.not.throw();
  });

  it('says how to install a missing agent, naming where it looked', () => {
    const entry = findAgent('codex');
    expect(() => resolveExecutable(entry, { lookupEnv: { PATH: dir } })).to.throw(AgentUnavailableError, /"codex" is not installed \(not found on the PATH\). Install it with: npm install -g @openai\/codex; or point CODEX_PATH or --agent-command at it/);
    expect(() => resolveExecutable(entry, { lookupEnv: { PATH: dir, CODEX_PATH: '/nowhere/codex' } })).to.throw(/\/nowhere\/codex \(from CODEX_PATH\) does not exist/);
  });

  it('probes installation and version into the store', async () => {
    const availability = await probeAgent(findAgent('claude'), { agentCommand: fakeClaude });
    expect(availability).to.deep.include({ installed: true, path: fakeClaude, version: '2.1.332 (Claude Code)' });
    const registry = createRegistry();
    const results = await probeAll(registry, { lookupEnv: { PATH: dir } });
    expect(results.find((result) => result.name === 'claude')).to.include({ installed: true });
    expect(results.find((result) => result.name === 'codex')).to.include({ installed: false });
    expect(registry.getSnapshot().context.availability.demo).to.include({ installed: true });
  });

  it('agentFor: an adapter agent, a passthrough, the demo; a missing agent fails at once saying how to install it', () => {
    expect(agentFor('claude', { agentCommand: fakeClaude }).agentInfo.name).to.equal('claude-code');
    expect(agentFor(`acp:${fakeClaude} --acp`).delegateInitialize).to.equal(true);
    // The demo agent runs as a subprocess (`warden demo-agent`) behind a passthrough.
    const demo = agentFor('demo');
    expect(demo.delegateInitialize).to.equal(true);
    expect((demo.input as { args: string[] }).args.at(-1)).to.equal('demo-agent');
    expect(() => agentFor('gemini', { lookupEnv: { PATH: dir } })).to.throw(AgentUnavailableError, /npm install -g @google\/gemini-cli/);
    // The ACP adapters' packages as npm has them now (codex-acp moved from @zed-industries).
    expect(() => agentFor('codex-acp', { lookupEnv: { PATH: dir } })).to.throw(AgentUnavailableError, /npm install -g @agentclientprotocol\/codex-acp;/);
    expect(() => agentFor('claude-acp', { lookupEnv: { PATH: dir } })).to.throw(AgentUnavailableError, /npm install -g @agentclientprotocol\/claude-agent-acp;/);
  });

  it('warden agents --json prints the table', async () => {
    const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [main, 'agents', '--json'], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` }, timeout: 30_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
    const table = JSON.parse(output) as Array<{ name: string; installed: boolean; version: string | null }>;
    expect(table.map((row) => row.name)).to.include.members(['claude', 'codex', 'gemini', 'opencode', 'claude-acp', 'codex-acp', 'demo']);
    expect(table.find((row) => row.name === 'claude')).to.include({ installed: true, version: '2.1.332 (Claude Code)' });
  }).timeout(30_000);
});
