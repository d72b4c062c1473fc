/**
 * `warden demo`: the main job on a fresh machine, with no agent installed and no network.
 * A host supervises the built-in demo agent as a real subprocess (`warden demo-agent`, an
 * ACP agent on stdio), talks to it through the embedding API (a streamed answer, a tool
 * behind a permission, two sessions answered side by side), and injects faults: a kill -9
 * mid-prompt, a hang (SIGSTOP, caught by the watchdog), then a crash loop that exceeds the
 * restart intensity. Each restart, the recovered session, the failed one and the final
 * supervision tree are shown as a terminal report (colour on a TTY, plain otherwise).
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { agentSettingsOf } from '../adapters/agent-settings.js';
import { demoAgentProcess } from '../adapters/demo-process.js';
import { isAlive } from './process-alive.js';
import { createHost, type Host, type HostEvent, type HostSessionHandle, type HostTreeNode } from '../runtime/host.js';
import type { SupervisionTreeNode } from '../supervision/introspection.js';
import { allowOnce } from '../acp/permission-choice.js';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Where to print (the demo is not `warden acp`, so stdout is allowed). */
  readonly write: (line: string) => void;
  /** Colour (ANSI) or plain text. */
  readonly colour?: boolean;
  /** How long the watchdog waits before it calls a silent busy agent hung, in ms. Default 1500. */
  readonly hangAfterMs?: number;
}

interface Paint {
  readonly bold: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly red: (text: string) => string;
  readonly green: (text: string) => string;
  readonly yellow: (text: string) => string;
  readonly cyan: (text: string) => string;
}

function paint(colour: boolean): Paint {
  const wrap = (code: string) => (text: string) => (colour ? `\u001b[${code}m${text}\u001b[0m` : text);
  return { bold: wrap('1'), dim: wrap('2'), red: wrap('31'), green: wrap('32'), yellow: wrap('33'), cyan: wrap('36') };
}

/** Runs the demo; resolves when everything has stopped. Throws if a step did not go as shown. */
export async function runDemo({ write, colour = false, hangAfterMs = 1500 }: DemoOptions): Promise<void> {
  const p = paint(colour);
  const started = Date.now();
  const stamp = () => p.dim(`${String(Date.now() - started).padStart(6)} ms`);
  const host = createHost({
    store: ':memory:',
    defaultAgent: 'demo',
    agents: {
      // The watchdog normalised as every agent's is (agent-settings.ts).
      demo: demoAgentProcess({ wordDelayMs: 30, watchdog: agentSettingsOf({ hangAfterMs }).watchdog }),
    },
    permission: (request) => {
      write(`  ${p.yellow('?')} the agent asks permission: ${request.toolCall.title}; the demo's policy allows it`);
      return allowOnce(request.options);
    },
  });
  host.on((event) => {
    const line = describeEvent(event, p);
    if (line) write(`${stamp()}  ${line}`);
  });
  const pids: number[] = [];
  try {
    write(p.bold('warden demo: acp-warden supervising the built-in demo agent as a real subprocess'));
    write(p.dim('  (no agent installed, no network needed; faults are injected on purpose)\n'));
    const session = await host.newSession({ cwd: process.cwd() });
    const pid = () => {
      const found = agentPid(host);
      if (found !== undefined && !pids.includes(found)) pids.push(found);
      return found;
    };
    write(`${stamp()}  session ${p.cyan(session.sessionId)} opened; agent process pid ${pid()}`);

    write(p.bold('\n1. A prompt, streamed'));
    await converse(session, 'hello', write, p);

    write(p.bold('\n2. A tool behind a permission request'));
    await converse(session, 'please run the tool', write, p);

    write(p.bold('\n3. Two sessions at once: neither waits for the other'));
    const other = await host.newSession({ cwd: process.cwd() });
    await converseTogether([[session, 'what does a supervisor do?'], [other, 'and what does the journal keep?']], write, p);
    write(p.dim(`  (both sessions live in the same agent process: the faults below restart both, and each is told)`));

    write(p.bold('\n4. kill -9 of the agent in the middle of an answer'));
    const victim = pid() as number;
    await converse(session, 'a long answer that will be interrupted by a crash', write, p, () => {
      write(`  ${p.red('✗')} kill -9 ${victim}`);
      process.kill(victim, 'SIGKILL');
    });
    await waitFor(() => session.state() === 'ready' && pid() !== victim, 'the recovered session');
    write(`  the session is ${p.green(session.state())} again; new agent pid ${pid()}`);
    await converse(session, 'are you back?', write, p);

    write(p.bold(`\n5. A hang: the agent stops answering (SIGSTOP); the watchdog gives it ${hangAfterMs} ms`));
    const frozen = pid() as number;
    await converse(session, 'a long answer during which the agent freezes', write, p, () => {
      write(`  ${p.red('✗')} kill -STOP ${frozen}`);
      process.kill(frozen, 'SIGSTOP');
    });
    await waitFor(() => session.state() === 'ready' && pid() !== frozen, 'the recovered session');
    write(`  the session is ${p.green(session.state())} again; new agent pid ${pid()}`);
    await converse(session, 'still there?', write, p);

    write(p.bold('\n6. A crash loop: more restarts than the intensity allows (3 in 30 s)'));
    for (let kill = 0; kill < 4 && session.state() !== 'failed'; kill++) {
      const current = pid();
      if (current === undefined) break;
      write(`  ${p.red('✗')} kill -9 ${current}`);
      process.kill(current, 'SIGKILL');
      await waitFor(() => session.state() === 'failed' || (pid() !== undefined && pid() !== current && session.state() === 'ready'), 'a restart or the failure');
    }
    write(`  the session is ${session.state() === 'failed' ? p.red('failed') : session.state()}; a prompt now gets a clean error:`);
    await session.prompt('hello?').result.then(
      (result) => write(`  < stop reason ${result.stopReason}`),
      (error: Error) => write(`  < ${p.red('error')}: ${error.message}`),
    );

    write(p.bold('\nThe supervision tree now'));
    write(formatHostTree(host.tree(), p));
    const journal = await host.journal.getSession(session.sessionId);
    const entries = await host.journal.entries(session.sessionId);
    write(p.bold('\nThe journal'));
    write(`  session ${session.sessionId}: ${entries.length} entries, ${journal?.restarts ?? 0} restarts recorded, state ${journal?.state}`);
  } finally {
    await host.stop();
  }
  const left = pids.filter(isAlive);
  write(p.bold('\nStopped.') + ` Agent processes started: ${pids.length}; still running: ${left.length === 0 ? p.green('0') : p.red(String(left.length))}.`);
  if (left.length > 0) throw new Error(`processes left behind: ${left.join(', ')}`);
}

/** A `notice` update (warden's words: a restart, a recovery) as a line of its own, marked `!`: never part of the agent's answer. */
function noticeLine(update: SessionUpdate, p: Paint): string | undefined {
  if (update.sessionUpdate !== 'notice') return undefined;
  const { severity, title, description } = update;
  const mark = severity === 'error' ? p.red('!') : severity === 'warning' ? p.yellow('!') : p.dim('!');
  return `  ${mark} acp-warden ${severity}: ${title}${description ? `: ${description}` : ''}`;
}

/** One prompt, its streamed answer on one line (warden's notices on lines of their own); `fault` runs after the first words arrive. */
async function converse(session: HostSessionHandle, text: string, write: (line: string) => void, p: Paint, fault?: () => void): Promise<void> {
  write(`  ${p.cyan('>')} ${text}`);
  const run = session.prompt(text);
  let said = '';
  let faulted = false;
  const tools: string[] = [];
  // Shown after the answer, so that the answer stays one line, whole, even when a notice came mid-answer.
  const notices: string[] = [];
  try {
    for await (const update of run as AsyncIterable<SessionUpdate>) {
      const notice = noticeLine(update, p);
      if (notice) notices.push(notice);
      if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') {
        said += update.content.text;
        if (fault && !faulted && said.split(' ').length > 3) {
          faulted = true;
          fault();
        }
      }
      if (update.sessionUpdate === 'tool_call_update' && update.status) tools.push(update.status);
    }
  } catch {
    // The result says why.
  }
  if (said) write(`  ${p.green('<')} ${said.replace(/\s+/g, ' ').trim()}`);
  for (const notice of notices) write(notice);
  if (tools.length > 0) write(`  [tool ${tools.join(' → ')}]`);
  await run.result.then(
    (result) => write(`  (stop reason: ${result.stopReason})`),
    (error: Error & { data?: { reason?: string } }) => write(`  (${p.red('error')}: ${error.message})`),
  );
}

/** Prompts in several sessions at once; shows each answer, and how their words arrived mixed. */
async function converseTogether(turns: ReadonlyArray<readonly [HostSessionHandle, string]>, write: (line: string) => void, p: Paint): Promise<void> {
  const order: number[] = [];
  const answers = await Promise.all(turns.map(async ([session, text], index) => {
    write(`  ${p.cyan(`${index + 1}>`)} ${text} ${p.dim(`(session ${session.sessionId})`)}`);
    const run = session.prompt(text);
    let said = '';
    for await (const update of run as AsyncIterable<SessionUpdate>) {
      if (update.sessionUpdate !== 'agent_message_chunk' || update.content.type !== 'text') continue;
      said += update.content.text;
      order.push(index);
    }
    const result = await run.result.then((done) => done.stopReason, (error: Error) => `error: ${error.message}`);
    return { said, result };
  }));
  for (const [index, answer] of answers.entries()) write(`  ${p.green(`${index + 1}<`)} ${answer.said.replace(/\s+/g, ' ').trim()} (stop reason: ${answer.result})`);
  const switches = order.filter((session, at) => at > 0 && session !== order[at - 1]).length;
  write(`  the answers streamed side by side: ${order.length} words, the sessions took turns ${switches} times`);
}

function describeEvent(event: HostEvent, p: Paint): string | undefined {
  // Supervisor paths start with XState's system id (x:0/…): not news to a reader.
  const where = 'supervisor' in event ? event.supervisor.replace(/^x:\d+\//u, '') : '';
  switch (event.type) {
    case 'session.restarting':
      return `${p.yellow('↻')} session restarting: ${event.exit} (restart ${event.restarts}) ${p.dim(event.sessionId)}`;
    case 'session.recovered':
      return `${p.green('✓')} session recovered after restart ${event.restarts} ${p.dim(event.sessionId)}`;
    case 'session.failed':
      return `${p.red('✗')} session failed: ${event.reason} ${p.dim(event.sessionId)}`;
    case 'child.restarted':
      return p.dim(`${where}: restarted ${event.childId} (restart #${event.restarts})`);
    case 'child.exited':
      return event.reason.kind === 'normal' ? undefined : p.dim(`${where}: ${event.childId} exited -> ${event.action}`);
    case 'intensity.exceeded':
      return p.red(`${where}: more than ${event.intensity} restarts in ${event.period} ms: giving up`);
    default:
      return undefined;
  }
}

/** The running agent process of the host's only agent, from the supervision tree. */
function agentPid(host: Host): number | undefined {
  const find = (node: HostTreeNode | SupervisionTreeNode): number | undefined => {
    if ('pid' in node && node.pid !== undefined && node.status === 'running') return node.pid;
    for (const child of node.children ?? []) {
      const found = find(child);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return find(host.tree());
}

/** The host tree as indented lines. */
export function formatHostTree(node: HostTreeNode | SupervisionTreeNode, p: Paint = paint(false), depth = 0): string {
  const pad = '  '.repeat(depth + 1);
  const facts: string[] = [node.type, node.status];
  if ('restarts' in node) facts.push(`restarts ${node.restarts}`);
  if ('strategy' in node && node.strategy) facts.push(node.strategy);
  if ('pid' in node && node.pid !== undefined) facts.push(`pid ${node.pid}`);
  const lines = [`${pad}${p.bold(node.id)} ${p.dim(`(${facts.join(', ')})`)}`];
  for (const child of node.children ?? []) lines.push(formatHostTree(child, p, depth + 1));
  return lines.join('\n');
}

/** How long the demo waits for a recovery (a restart, a failure) before it gives up: 15 s. */
const recoveryWaitMs = 15_000;

/** Polls `predicate` until it holds; throws naming `what` after {@link recoveryWaitMs}. */
async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + recoveryWaitMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`warden demo: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

