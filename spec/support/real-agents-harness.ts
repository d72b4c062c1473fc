/**
 * What the end-to-end tests with the real Claude Code and Codex CLIs share
 * (spec/e2e/real-agents.spec.ts, spec/e2e/real-warden-restart.spec.ts): where
 * `npm run agents:install` put the binaries, a temp workspace (HOME, TMPDIR, projects), the
 * environment each CLI runs with against the fake model servers, the process table (the CLI
 * under a warden, what a suite left behind), and the user texts of a model request.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { waitUntil } from './processes.js';
import { closedGracefully, killGroups } from './warden-process.js';

export const repo = fileURLToPath(new URL('../..', import.meta.url));
/** Where `npm run agents:install` put the CLIs (WARDEN_AGENTS_DIR, as for the install script). */
export const agentsBin = join(process.env.WARDEN_AGENTS_DIR ?? join(repo, '.cache', 'agents'), 'node_modules', '.bin');
export const claudeBin = join(agentsBin, 'claude');
export const codexBin = join(agentsBin, 'codex');
/** warden's entry point as users run it: the build (dist/cli/main.js, kept fresh by spec/support/fresh-build.ts), run by plain `node`. */
export const wardenMain = join(repo, 'dist', 'cli', 'main.js');

export function skipMessage(what: string): string {
  return `${what} not installed: run \`npm run agents:install\` to include these tests`;
}

// ---------------------------------------------------------------------------------------------
// Workspaces and the CLIs' environment
// ---------------------------------------------------------------------------------------------

/** One temp directory: HOME, TMPDIR and a fresh project directory per call of `project()`. */
export interface Workspace {
  readonly base: string;
  readonly home: string;
  readonly tmp: string;
  project(): string;
}

export function workspace(prefix: string): Workspace {
  const base = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const home = join(base, 'home');
  const tmp = join(base, 'tmp');
  mkdirSync(home);
  mkdirSync(tmp);
  let projects = 0;
  return {
    base,
    home,
    tmp,
    project() {
      projects += 1;
      const directory = join(base, `project-${projects}`);
      mkdirSync(directory);
      return directory;
    },
  };
}

/** `--env NAME=VALUE` for each entry (warden acp passes them to the agent CLI). */
export const envArgs = (env: Record<string, string>) => Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`]);

/** The environment of the real Claude Code against the fake Anthropic server at `serverUrl`. */
export function claudeEnv(serverUrl: string, space: Workspace): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: serverUrl,
    ANTHROPIC_API_KEY: 'dummy',
    HOME: space.home,
    TMPDIR: space.tmp,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    NO_PROXY: '127.0.0.1,localhost',
  };
}

/** The environment of the real Codex; its config is in `codexHome` ({@link writeCodexHome}). */
export function codexEnv(space: Workspace, codexHome: string): Record<string, string> {
  return {
    HOME: space.home,
    CODEX_HOME: codexHome,
    TMPDIR: space.tmp,
    FAKE_OPENAI_API_KEY: 'dummy',
    RUST_LOG: 'warn',
    NO_PROXY: '127.0.0.1,localhost',
  };
}

/**
 * `<home>/.codex` with the config recorded for the fake OpenAI server at `serverUrl` (README,
 * section 2); the approval policy comes from the adapter (untrusted). `envKey` names the
 * variable Codex reads the key from. Returns its path.
 */
export function writeCodexHome(space: Workspace, serverUrl: string, envKey = 'FAKE_OPENAI_API_KEY'): string {
  const codexHome = join(space.home, '.codex');
  mkdirSync(codexHome);
  writeFileSync(join(codexHome, 'config.toml'), [
    'model = "gpt-5.5"',
    'model_provider = "fake"',
    'approval_policy = "never"',
    'sandbox_mode = "workspace-write"',
    'check_for_update_on_startup = false',
    '[model_providers.fake]',
    'name = "Fake OpenAI"',
    `base_url = "${serverUrl}/v1"`,
    `env_key = "${envKey}"`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '[analytics]',
    'enabled = false',
    '[feedback]',
    'enabled = false',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
  ].join('\n'));
  return codexHome;
}

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

export interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  readonly cmdline: string;
}

/** Live (not zombie) processes, from /proc. */
export function processes(): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      rows.push({ pid: Number(entry), ppid: Number(fields[1]), cmdline });
    } catch {
      // gone while reading
    }
  }
  return rows;
}

/** Live descendants of `pid`. */
export function descendants(pid: number): ProcessRow[] {
  const rows = processes();
  const found: ProcessRow[] = [];
  const parents = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const row of rows) {
      if (parents.has(row.ppid) && !parents.has(row.pid)) {
        parents.add(row.pid);
        found.push(row);
        grew = true;
      }
    }
  }
  return found;
}

/**
 * The agent process a warden started (its port's process, whose pid is the port's process
 * group): its direct child running from .cache/agents. A restart replaces it with a new pid.
 */
export function agentProcessOf(wardenPid: number): ProcessRow | undefined {
  return descendants(wardenPid).find((row) => row.ppid === wardenPid && row.cmdline.includes('.cache/agents'));
}

/**
 * The real CLI under a warden process: its descendant running from .cache/agents that has
 * no such descendant itself (for Codex, the native binary under the Node launcher).
 */
export function cliUnder(wardenPid: number): ProcessRow | undefined {
  const tree = descendants(wardenPid).filter((row) => row.cmdline.includes('.cache/agents'));
  return tree.find((row) => !tree.some((other) => other.ppid === row.pid));
}

function environOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Processes left by a suite: the warden processes (their command line names `base`, via
 * `--env HOME=…`), the real CLIs and whatever they started (their environment points into
 * `base`). Matching on `base` rather than on `.cache/agents` alone keeps a concurrent run (or
 * someone's own `claude` from .cache/agents) out of it.
 */
export function leftovers(base: string): ProcessRow[] {
  return processes().filter((row) => row.pid !== process.pid && (row.cmdline.includes(base) || environOf(row.pid).includes(base)));
}

/** Waits for every process of ours to be gone; kills and names what stays. */
export async function expectNoLeftovers(base: string, timeoutMs = 15_000): Promise<void> {
  try {
    await waitUntil(() => leftovers(base).length === 0, 'the real CLIs and their children to exit', timeoutMs, 100);
  } catch {
    const left = leftovers(base);
    for (const row of left) {
      try {
        process.kill(row.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    expect(left.map((row) => `${row.pid} ${row.cmdline}`), 'processes left behind').to.deep.equal([]);
  }
}

// ---------------------------------------------------------------------------------------------
// What the model saw
// ---------------------------------------------------------------------------------------------

/**
 * Texts of the `role:"user"` messages of an Anthropic request, without the `<system-reminder>`
 * blocks Claude Code puts among them (its attribution and date notes): what the user said.
 */
export function anthropicUserTexts(body: unknown): string[] {
  const messages = ((body as { messages?: Array<{ role?: string; content?: unknown }> })?.messages ?? []).filter((message) => message.role === 'user');
  const texts = messages.flatMap((message) => (typeof message.content === 'string' ? [message.content] : Array.isArray(message.content) ? (message.content as Array<{ type?: string; text?: string }>).filter((block) => block.type === 'text').map((block) => block.text ?? '') : []));
  return texts.filter((text) => !text.trimStart().startsWith('<system-reminder>'));
}

/** Texts of the user messages of a Responses request. */
export function openaiUserTexts(body: unknown): string[] {
  const input = (body as { input?: Array<{ type?: string; role?: string; content?: unknown }> })?.input ?? [];
  return input
    .filter((item) => item.role === 'user')
    .flatMap((item) => (Array.isArray(item.content) ? (item.content as Array<{ text?: string }>).map((part) => part.text ?? '') : typeof item.content === 'string' ? [item.content] : []));
}

/** A user message Claude Code wrote to its transcript: its text blocks, and when it wrote it. */
export interface TranscriptUserText {
  readonly text: string;
  readonly atMs: number;
}

/**
 * The user texts of Claude Code's own transcript of session `claudeSessionId`
 * (`<home>/.claude/projects/<cwd>/<id>.jsonl`), in file order: what a `--resume` of it reads
 * back. Lines the CLI writes itself (`rowSource: "harness"`, like "[Request interrupted by user]")
 * are left out; a prompt it was sent is `rowSource: "local"`.
 */
export function claudeTranscriptUserTexts(home: string, claudeSessionId: string): TranscriptUserText[] {
  const projects = join(home, '.claude', 'projects');
  const files = readdirSync(projects, { recursive: true, encoding: 'utf8' }).filter((name) => basename(name) === `${claudeSessionId}.jsonl`);
  const texts: TranscriptUserText[] = [];
  for (const file of files) {
    for (const line of readFileSync(join(projects, file), 'utf8').split('\n')) {
      let entry: { type?: string; rowSource?: string; timestamp?: string; message?: { role?: string; content?: unknown } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      if (entry.type !== 'user' || entry.rowSource === 'harness' || entry.message?.role !== 'user') continue;
      const content = entry.message.content;
      const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as Array<{ type?: string; text?: string }>) : [];
      for (const block of blocks) if (block.type === 'text' && typeof block.text === 'string') texts.push({ text: block.text, atMs: Date.parse(entry.timestamp ?? '') });
    }
  }
  return texts;
}

/**
 * The end of a real-agent suite: `warden` closed as an editor that quits closes it, the fake
 * model server closed, nothing of it left in the workspace (checked), then whatever still runs
 * of `launched` (warden, the adapter, the CLI) killed by group and the workspace removed.
 */
export async function endRealAgentSuite(warden: ChildProcess | undefined, server: { close(): Promise<void> } | undefined, space: Workspace | undefined, launched: ChildProcess[]): Promise<void> {
  try {
    if (warden) await closedGracefully(warden);
    await server?.close();
    if (space) await expectNoLeftovers(space.base);
  } finally {
    await killGroups(launched, { descendants: true });
    if (space) rmSync(space.base, { recursive: true, force: true, maxRetries: 5 });
  }
}
