/**
 * The agent options normalised once (issue 29, "Options normalised once"): the command line
 * (`warden acp`, `warden serve`) and `createHost({ agentOptions, supervision })` end in one
 * `AgentSettings`, made by one function, and the agents take it as is. The hang watchdog used
 * to take four shapes on its way in (seconds, ms with 0 for off, an optional ms, `{ idleMs }`);
 * below the edge it is now the port's `{ idleMs, toolIdleMs }` only.
 */
import { expect } from 'chai';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AdapterAgentOptions } from '../../src/adapters/adapter-agent.js';
import { agentOf } from '../../src/adapters/agent-factory.js';
import { agentSettingsOf, type AgentSettings, type HangLimits, type RestartLimits } from '../../src/adapters/agent-settings.js';
import type { AcpPassthroughOptions } from '../../src/adapters/acp-passthrough.js';
import { agentOptionsOf, parseAcpArgs, type AcpCommandOptions } from '../../src/cli/acp.js';
import { parseServeArgs, type ServeCommandOptions } from '../../src/cli/serve.js';
import type { HostOptions } from '../../src/runtime/host.js';
import { codeOf, sourcesUnder, src } from '../support/source-files.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

/** The settings `warden acp ARGS` runs its agents with. */
function acpSettings(args: string[]): AgentSettings {
  return agentSettingsOf(agentOptionsOf(parseAcpArgs(['--agent', 'claude', ...args]) as AcpCommandOptions));
}

/** The settings `warden serve ARGS` runs its agents with. */
function serveSettings(args: string[]): AgentSettings {
  return agentSettingsOf(agentOptionsOf(parseServeArgs(['--agent', 'claude', ...args]) as ServeCommandOptions));
}

/** The settings `createHost(options)` runs its known agents with (its one call, in src/runtime/host.ts). */
function hostSettings(options: Pick<HostOptions, 'agentOptions' | 'supervision'>): AgentSettings {
  return agentSettingsOf(options.agentOptions, options.supervision);
}

/**
 * Every field of the settings, each in its one shape: a key added, dropped or retyped fails
 * the typecheck here (the record must name exactly the keys of AgentSettings).
 */
const fieldShapes: Record<keyof AgentSettings, (value: unknown) => boolean> = {
  lookup: (value) => typeof value === 'object' && value !== null,
  envPolicy: (value) => value === undefined || value === 'isolated' || value === 'inherit',
  env: (value) => value === undefined || (typeof value === 'object' && value !== null),
  passthrough: (value) => value === undefined || Array.isArray(value),
  restart: (value) => value === undefined || sameKeys(value, ['intensity', 'period'] satisfies Array<keyof RestartLimits>),
  watchdog: (value) => value === undefined || sameKeys(value, ['idleMs', 'toolIdleMs'] satisfies Array<keyof HangLimits>),
  maxLineBytes: (value) => value === undefined || (typeof value === 'number' && value > 0),
  protocol: (value) => value === undefined || value === 'v1' || value === 'v2' || value === 'auto',
  memoryLimit: (value) => value === undefined || (typeof value === 'object' && value !== null && Object.keys(value).length > 0 && Object.entries(value).every(([key, field]) => (['softBytes', 'hardBytes', 'pollMs'].includes(key) ? typeof field === 'number' && field > 0 : key === 'cgroup' && field === true))),
  cpuLimit: (value) => value === undefined || sameKeys(value, ['percent']),
  onCrash: (value) => value === undefined || value === 'continue' || value === 'retry' || value === 'fail',
  maxContinuations: (value) => value === undefined || (Number.isInteger(value) && (value as number) >= 0),
  rateLimitRetries: (value) => value === undefined || (Number.isInteger(value) && (value as number) >= 0),
};

/** A plain object with exactly these keys, each a positive number. */
function sameKeys(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const entries = Object.entries(value);
  return entries.length === keys.length && entries.every(([key, field]) => keys.includes(key) && typeof field === 'number' && field > 0);
}

/** Fails naming the field that is not in its one shape. */
function expectOneShape(settings: AgentSettings, label: string): void {
  expect(Object.keys(settings).sort(), `${label}: the fields of the settings`).to.deep.equal(Object.keys(fieldShapes).sort());
  for (const [key, isShape] of Object.entries(fieldShapes)) {
    expect(isShape(settings[key as keyof AgentSettings]), `${label}: ${key} = ${JSON.stringify(settings[key as keyof AgentSettings])}`).to.equal(true);
  }
}

/**
 * What the command line always states (no `--env`, no `--inherit-env`): a createHost caller
 * stating the same gets the same settings. Left unstated, each agent's own definition decides
 * (an adapter's environment policy), which is why the settings keep `undefined` for them.
 */
const statedByTheCommandLine = { env: {}, passthrough: [], envPolicy: 'isolated' } as const;

describe('agent settings: every option normalised once', () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly args: string[]; readonly host: Pick<HostOptions, 'agentOptions' | 'supervision'> }> = [
    {
      name: 'the watchdog and restarts through createHost supervision',
      args: ['--hang-after', '5', '--tool-hang-after', '90', '--restart-intensity', '2/10'],
      host: { agentOptions: statedByTheCommandLine, supervision: { intensity: 2, period: 10_000, hangAfterMs: 5000, toolHangAfterMs: 90_000 } },
    },
    {
      name: 'the same through createHost agentOptions',
      args: ['--hang-after', '5', '--tool-hang-after', '90', '--restart-intensity', '2/10'],
      host: { agentOptions: { ...statedByTheCommandLine, hangAfterMs: 5000, toolHangAfterMs: 90_000, restart: { intensity: 2, period: 10_000 } } },
    },
    {
      name: "the command line's default watchdog, given to createHost",
      args: [],
      host: { agentOptions: { ...statedByTheCommandLine, hangAfterMs: 120_000, toolHangAfterMs: 1_800_000 } },
    },
    {
      name: '--hang-after 0 and no hangAfterMs: no watchdog (the tool limit alone sets none)',
      args: ['--hang-after', '0', '--tool-hang-after', '60'],
      host: { agentOptions: { ...statedByTheCommandLine, toolHangAfterMs: 60_000 } },
    },
    {
      name: 'the environment, the lookup and the line limit',
      args: ['--hang-after', '0', '--agent-command', fakeClaude, '--env', 'A=1', '--env', 'B', '--inherit-env', '--max-line-mib', '2'],
      host: { agentOptions: { agentCommand: fakeClaude, env: { A: '1' }, passthrough: ['B'], envPolicy: 'inherit', maxLineBytes: 2 * 1024 * 1024 } },
    },
    {
      name: 'the memory limits (MiB on the command line, bytes and ms below it)',
      args: ['--hang-after', '0', '--max-memory', '300', '--max-memory-hard', '400', '--memory-poll', '0.5', '--memory-cgroup'],
      host: { agentOptions: { ...statedByTheCommandLine, maxMemoryBytes: 300 * 1024 * 1024, maxMemoryHardBytes: 400 * 1024 * 1024, memoryPollMs: 500, memoryCgroup: true } },
    },
    {
      name: 'the crash policy (--on-crash, --max-continuations)',
      args: ['--on-crash', 'retry', '--max-continuations', '3'],
      host: { agentOptions: { ...statedByTheCommandLine, hangAfterMs: 120_000, toolHangAfterMs: 1_800_000, onCrash: 'retry', maxContinuations: 3 } },
    },
  ];

  for (const { name, args, host } of cases) {
    it(`warden acp, warden serve and createHost give the same settings: ${name}`, () => {
      const fromHost = hostSettings(host);
      expectOneShape(fromHost, 'createHost');
      expect(acpSettings(args), 'warden acp').to.deep.equal(fromHost);
      expect(serveSettings(args), 'warden serve').to.deep.equal(fromHost);
    });
  }

  it("the watchdog is the port's { idleMs, toolIdleMs } or none: never seconds, never 0 for off", () => {
    expect(acpSettings([]).watchdog).to.deep.equal({ idleMs: 120_000, toolIdleMs: 1_800_000 });
    expect(acpSettings(['--hang-after', '0']).watchdog).to.equal(undefined);
    // A limit for tools alone comes from the port's default, with hangAfterMs from either option.
    expect(hostSettings({ supervision: { hangAfterMs: 700 } }).watchdog).to.deep.equal({ idleMs: 700, toolIdleMs: 1_800_000 });
    expect(hostSettings({ supervision: { hangAfterMs: 0 } }).watchdog).to.equal(undefined);
    // supervision wins over agentOptions, part by part, as createHost documents.
    expect(hostSettings({ agentOptions: { hangAfterMs: 1, toolHangAfterMs: 2, restart: { intensity: 9, period: 9 } }, supervision: { hangAfterMs: 3, intensity: 1 } })).to.deep.include({
      watchdog: { idleMs: 3, toolIdleMs: 2 },
      restart: { intensity: 1, period: 60_000 },
    });
  });

  it('the agents take the settings as they are: the same watchdog object reaches the port option of an adapter, a passthrough and the demo', () => {
    const settings = hostSettings({ agentOptions: { agentCommand: fakeClaude, hangAfterMs: 5000, maxLineBytes: 4096 } });
    const adapter = agentOf('claude', settings).input as AdapterAgentOptions;
    expect(adapter.definition.port?.watchdog).to.equal(settings.watchdog);
    expect(adapter.definition.port?.maxLineBytes).to.equal(4096);
    const passthrough = agentOf(`acp:${process.execPath} ${fakeClaude}`, settings).input as AcpPassthroughOptions;
    expect(passthrough.port?.watchdog).to.equal(settings.watchdog);
    const demo = agentOf('demo', settings).input as AcpPassthroughOptions;
    expect(demo.port?.watchdog).to.equal(settings.watchdog);
  });

  it('the memory limits reach the port option of an adapter, a passthrough and the demo; a hard limit below the soft one is refused at the edge', () => {
    const settings = hostSettings({ agentOptions: { agentCommand: fakeClaude, maxMemoryBytes: 300 * 1024 * 1024 } });
    expect(settings.memoryLimit).to.deep.equal({ softBytes: 300 * 1024 * 1024 });
    expect((agentOf('claude', settings).input as AdapterAgentOptions).definition.port?.memoryLimit).to.equal(settings.memoryLimit);
    expect((agentOf(`acp:${process.execPath} ${fakeClaude}`, settings).input as AcpPassthroughOptions).port?.memoryLimit).to.equal(settings.memoryLimit);
    expect((agentOf('demo', settings).input as AcpPassthroughOptions).port?.memoryLimit).to.equal(settings.memoryLimit);
    expect(() => hostSettings({ agentOptions: { maxMemoryBytes: 300, maxMemoryHardBytes: 200 } })).to.throw(TypeError, /at least/u);
    expect(parseServeArgs(['--agent', 'claude', '--max-memory', '300', '--max-memory-hard', '200'])).to.deep.equal({ error: 'warden serve: --max-memory-hard (200 MiB) must be at least --max-memory (300 MiB): the soft limit recycles the agent before the hard one kills it' });
    expect(parseServeArgs(['--agent', 'claude', '--memory-poll', '2'])).to.have.property('error').that.matches(/--memory-poll applies with a memory limit only/u);
  });

  it('below the edge nothing reads hangAfterMs: only the command line (src/cli/) and agentSettingsOf name it in code', () => {
    const readers = sourcesUnder()
      .filter((file) => /\b(?:tool)?hangAfterMs\b/iu.test(codeOf(file)))
      .map((file) => relative(src, file))
      .filter((file) => !file.startsWith('cli/'));
    expect(readers).to.deep.equal(['adapters/agent-settings.ts']);
  });
});
