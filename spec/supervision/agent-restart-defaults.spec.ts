/**
 * The restart defaults of agent processes, declared once (issue 15, "Tidy as you go"): what the
 * Claude Code and Codex adapters, `createHost({ supervision })`, `warden acp`'s usage and the
 * docs say are the same figures.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { claudeAdapter } from '../../src/adapters/claude/adapter.js';
import { codexAdapter } from '../../src/adapters/codex/adapter.js';
import { acpUsage } from '../../src/cli/acp.js';
import { agentRestartDefaults } from '../../src/supervision/agent-restart-defaults.js';

const doc = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');
const { intensity, period, backoff } = agentRestartDefaults;
const seconds = (ms: number) => `${ms / 1000} s`;

describe('agent restart defaults: one declaration, the same figures everywhere', () => {
  it('the Claude Code and Codex adapters restart their CLI with the defaults', () => {
    expect(claudeAdapter.restart).to.deep.equal({ intensity, period, backoff });
    expect(codexAdapter.restart).to.deep.equal({ intensity, period, backoff });
  });

  it('warden acp --help states the default --restart-intensity as N/SECONDS', () => {
    expect(acpUsage).to.contain(`(default ${intensity}/${period / 1000})`);
  });

  it('docs/cli.md, docs/recovery.md and docs/embedding.md state the same intensity, period and backoff', () => {
    expect(doc('cli.md')).to.contain(`(default \`${intensity}/${period / 1000}\`)`);
    expect(doc('recovery.md')).to.contain(`intensity ${intensity} in ${seconds(period)}`);
    expect(doc('recovery.md')).to.contain(`backoff ${backoff.minDelay} ms … ${seconds(backoff.maxDelay)}`);
    expect(doc('recovery.md')).to.contain(`(default ${intensity} in ${seconds(period)})`);
    expect(doc('embedding.md')).to.contain(`default ${intensity} in ${seconds(period)}`);
  });
});
