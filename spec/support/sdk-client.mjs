#!/usr/bin/env node
// A reference ACP v1 client built only with the official SDK (@agentclientprotocol/sdk),
// used as a test peer: it spawns an agent command, runs one scripted scenario against it
// and prints ONE JSON line to stdout describing everything it observed.
//
// Usage: node spec/support/sdk-client.mjs --scenario NAME [options] -- AGENT_COMMAND [ARGS...]
//   --scenario   lifecycle | permission | cancel | errors | fs | terminal | die
//   --cwd DIR    session cwd (default: a fresh temp directory, removed at the end)
//   --keep       keep the temp directory
//   --permission allow | reject | cancel   how to answer session/request_permission (default allow;
//                the cancel scenario always answers cancelled)
//   --trace      include every raw message in wire order as `trace`
//   --step-timeout MS   per-step timeout (default 10000)
//
// Exit 0 with {"ok":true,...} when the scenario ran (agent error responses are recorded, not
// fatal); exit 1 with {"ok":false,"error":{...},...} when it could not (timeout, agent gone,
// initialize or session/new failed, bad usage). The agent is always shut down: stdin closed,
// then SIGTERM and SIGKILL to its process group.
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from '@agentclientprotocol/sdk';

const SCENARIOS = ['lifecycle', 'permission', 'cancel', 'errors', 'fs', 'terminal', 'die'];
const started = Date.now();
const elapsed = () => Date.now() - started;

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

const rawArgs = process.argv.slice(2);
const dashDash = rawArgs.indexOf('--');
const ownArgs = dashDash >= 0 ? rawArgs.slice(0, dashDash) : rawArgs;
const agentCommand = dashDash >= 0 ? rawArgs.slice(dashDash + 1) : [];
const option = (name) => {
  const index = ownArgs.indexOf(name);
  return index >= 0 ? ownArgs[index + 1] : undefined;
};
const scenario = option('--scenario');
const permissionAnswer = option('--permission') ?? 'allow';
const stepTimeout = Number(option('--step-timeout') ?? 10_000);
const keep = ownArgs.includes('--keep');
const tracing = ownArgs.includes('--trace');

/** Everything observed; printed as one JSON line at the end. */
const report = {
  ok: false,
  scenario,
  agentCommand,
  cwd: undefined,
  clientCapabilities: undefined,
  steps: [],
  updates: [],
  served: [],
  extNotifications: [],
  summary: {},
  agentExit: null,
  agentStderr: '',
  durationMs: 0,
};
const trace = [];

function emit(exitCode) {
  report.durationMs = elapsed();
  if (tracing) report.trace = trace;
  process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(exitCode));
}

if (!SCENARIOS.includes(scenario) || agentCommand.length === 0 || !['allow', 'reject', 'cancel'].includes(permissionAnswer)) {
  report.error = {
    message: `usage: sdk-client.mjs --scenario ${SCENARIOS.join('|')} [--cwd DIR] [--keep] [--permission allow|reject|cancel] [--trace] [--step-timeout MS] -- AGENT_COMMAND [ARGS...]`,
  };
  emit(1);
} else {
  main();
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

class Fatal extends Error {}

const errorOf = (error) => ({
  code: typeof error?.code === 'number' ? error.code : null,
  message: String(error?.message ?? error),
  ...(error?.data !== undefined ? { data: error.data } : {}),
});
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
/** Lets notification handlers already dispatched by the SDK finish (they run a few ticks late). */
const settle = () => new Promise((done) => setTimeout(done, 20));

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Fatal(`timeout after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const textOf = (updates) =>
  updates
    .filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk' && entry.update.content?.type === 'text')
    .map((entry) => entry.update.content.text)
    .join('');

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main() {
  const ownsCwd = !option('--cwd');
  const cwd = ownsCwd ? realpathSync(mkdtempSync(join(tmpdir(), 'sdk-client-'))) : resolve(option('--cwd'));
  report.cwd = cwd;
  const overall = setTimeout(() => fail(new Fatal('overall timeout (120 s)')), 120_000);

  // --- spawn the agent in its own process group --------------------------------------------
  const [command, ...args] = agentCommand;
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let shuttingDown = false;
  const exited = new Promise((done) => {
    child.on('exit', (code, signal) => {
      report.agentExit = { code, signal, duringScenario: !shuttingDown, atMs: elapsed() };
      done();
    });
  });
  const spawnFailed = new Promise((_, reject) => child.on('error', (error) => reject(new Fatal(`spawn failed: ${error.message}`))));
  spawnFailed.catch(() => {});
  child.stdin.on('error', () => {}); // EPIPE once the agent is gone
  child.stderr.on('data', (chunk) => {
    process.stderr.write(chunk);
    report.agentStderr = (report.agentStderr + chunk.toString('utf8')).slice(-4000);
  });

  // --- ACP stream, tapped for the optional wire trace -----------------------------------------
  const raw = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const tapIn = new TransformStream({
    transform(message, controller) {
      if (tracing) trace.push({ dir: 'recv', atMs: elapsed(), msg: message });
      controller.enqueue(message);
    },
  });
  const tapOut = new TransformStream({
    transform(message, controller) {
      if (tracing) trace.push({ dir: 'send', atMs: elapsed(), msg: message });
      controller.enqueue(message);
    },
  });
  void raw.readable.pipeTo(tapIn.writable).catch(() => {});
  void tapOut.readable.pipeTo(raw.writable).catch(() => {});
  const stream = { readable: tapIn.readable, writable: tapOut.writable };

  // --- client state ----------------------------------------------------------------------------
  /** @type {import('@agentclientprotocol/sdk').ClientCapabilities} */
  let advertised = {};
  let currentStep = null;
  let cancelSentAt = null;
  /** Called at the first `agent_message_chunk` while set (the cancel scenario waits for it). */
  let textStreamed = null;
  const terminals = new Map();
  let terminalCounter = 0;

  const serve = (method, handler) => async (context) => {
    const entry = { method, atMs: elapsed(), params: context.params };
    report.served.push(entry);
    try {
      const result = await handler(context);
      entry.result = result ?? null;
      return result;
    } catch (error) {
      entry.error = errorOf(error);
      throw error;
    }
  };

  // fs confined to cwd
  const root = cwd;
  const inside = (candidate) => candidate === root || candidate.startsWith(root + sep);
  const refuse = (path, why) => RequestError.invalidParams({ path }, why);
  async function confine(path, forWrite) {
    if (!isAbsolute(path)) throw refuse(path, 'path must be absolute');
    const lexical = resolve(path);
    if (!inside(lexical)) throw refuse(path, 'path is outside the session directory');
    let real;
    if (forWrite) {
      await mkdir(dirname(lexical), { recursive: true });
      real = join(await realpath(dirname(lexical)), basename(lexical));
      try {
        real = await realpath(real);
      } catch {
        // new file
      }
    } else {
      try {
        real = await realpath(lexical);
      } catch (error) {
        if (error.code === 'ENOENT') throw RequestError.resourceNotFound(path);
        throw error;
      }
    }
    if (!inside(real)) throw refuse(path, 'path resolves outside the session directory');
    return real;
  }
  const needCapability = (enabled, method) => {
    if (!enabled) throw RequestError.methodNotFound(method);
  };

  function terminalOf(terminalId) {
    const terminal = terminals.get(terminalId);
    if (!terminal) throw RequestError.resourceNotFound(`terminal:${terminalId}`);
    return terminal;
  }

  const app = client({ name: 'sdk-client' })
    .onNotification(methods.client.session.update, ({ params }) => {
      const entry = { step: currentStep?.step ?? null, atMs: elapsed(), sessionId: params.sessionId, update: params.update };
      if (cancelSentAt !== null) entry.afterCancel = true;
      if (params.update.sessionUpdate === 'agent_message_chunk') textStreamed?.();
      report.updates.push(entry);
      currentStep?.updates.push(entry);
    })
    .onNotification('*', ({ method, params }) => {
      report.extNotifications.push({ method, atMs: elapsed(), params });
    })
    .onRequest(
      methods.client.session.requestPermission,
      serve(methods.client.session.requestPermission, ({ params }) => {
        const answer = scenario === 'cancel' || cancelSentAt !== null ? 'cancel' : permissionAnswer;
        if (answer === 'cancel') return { outcome: { outcome: 'cancelled' } };
        const prefix = answer === 'allow' ? 'allow_' : 'reject_';
        const chosen = params.options.find((entry) => entry.kind.startsWith(prefix));
        if (!chosen) return { outcome: { outcome: 'cancelled' } };
        return { outcome: { outcome: 'selected', optionId: chosen.optionId } };
      }),
    )
    .onRequest(
      methods.client.fs.readTextFile,
      serve(methods.client.fs.readTextFile, async ({ params }) => {
        needCapability(advertised.fs?.readTextFile, methods.client.fs.readTextFile);
        const real = await confine(params.path, false);
        let content = await readFile(real, 'utf8');
        if (params.line != null || params.limit != null) {
          const lines = content.split('\n');
          const from = Math.max(0, (params.line ?? 1) - 1);
          content = lines.slice(from, params.limit != null ? from + params.limit : undefined).join('\n');
        }
        return { content };
      }),
    )
    .onRequest(
      methods.client.fs.writeTextFile,
      serve(methods.client.fs.writeTextFile, async ({ params }) => {
        needCapability(advertised.fs?.writeTextFile, methods.client.fs.writeTextFile);
        const real = await confine(params.path, true);
        await writeFile(real, params.content, 'utf8');
        return {};
      }),
    )
    .onRequest(
      methods.client.terminal.create,
      serve(methods.client.terminal.create, ({ params }) => {
        needCapability(advertised.terminal, methods.client.terminal.create);
        terminalCounter += 1;
        const terminalId = `term-${terminalCounter}`;
        const env = { ...process.env };
        for (const variable of params.env ?? []) env[variable.name] = variable.value;
        const limit = params.outputByteLimit ?? null;
        const terminal = { output: Buffer.alloc(0), truncated: false, exitStatus: null, child: null };
        const append = (chunk) => {
          terminal.output = Buffer.concat([terminal.output, chunk]);
          if (limit !== null && terminal.output.length > limit) {
            let cut = terminal.output.length - limit;
            while (cut < terminal.output.length && (terminal.output[cut] & 0xc0) === 0x80) cut += 1;
            terminal.output = terminal.output.subarray(cut);
            terminal.truncated = true;
          }
        };
        terminal.exited = new Promise((done) => {
          const proc = spawn(params.command, params.args ?? [], {
            cwd: params.cwd ?? cwd,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          terminal.child = proc;
          proc.stdout.on('data', append);
          proc.stderr.on('data', append);
          proc.on('error', (error) => {
            append(Buffer.from(`${error.message}\n`));
            terminal.exitStatus = { exitCode: 127, signal: null };
            done();
          });
          proc.on('close', (exitCode, signal) => {
            terminal.exitStatus ??= { exitCode, signal };
            done();
          });
        });
        terminals.set(terminalId, terminal);
        return { terminalId };
      }),
    )
    .onRequest(
      methods.client.terminal.output,
      serve(methods.client.terminal.output, ({ params }) => {
        const terminal = terminalOf(params.terminalId);
        return {
          output: terminal.output.toString('utf8'),
          truncated: terminal.truncated,
          ...(terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {}),
        };
      }),
    )
    .onRequest(
      methods.client.terminal.waitForExit,
      serve(methods.client.terminal.waitForExit, async ({ params, signal }) => {
        const terminal = terminalOf(params.terminalId);
        await Promise.race([
          terminal.exited,
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(RequestError.requestCancelled()), { once: true })),
        ]);
        return terminal.exitStatus;
      }),
    )
    .onRequest(
      methods.client.terminal.kill,
      serve(methods.client.terminal.kill, ({ params }) => {
        const terminal = terminalOf(params.terminalId);
        if (!terminal.exitStatus) terminal.child?.kill('SIGKILL');
        return {};
      }),
    )
    .onRequest(
      methods.client.terminal.release,
      serve(methods.client.terminal.release, ({ params }) => {
        const terminal = terminalOf(params.terminalId);
        if (!terminal.exitStatus) terminal.child?.kill('SIGKILL');
        terminals.delete(params.terminalId);
        return {};
      }),
    )
    .onRequest(
      '*',
      serve('*', ({ method }) => {
        throw RequestError.methodNotFound(method);
      }),
    );

  const connection = app.connect(stream);
  const agentCtx = connection.agent;

  // --- step runner ---------------------------------------------------------------------------
  /**
   * Sends one request and records it. Agent errors are recorded (not thrown) unless
   * `required`; a timeout or a closed connection is fatal unless `tolerateClose`.
   */
  async function step(name, method, params, { required = false, tolerateClose = false } = {}) {
    const record = { step: name, method, params, atMs: elapsed(), updates: [] };
    report.steps.push(record);
    currentStep = record;
    try {
      record.result = await withTimeout(Promise.race([agentCtx.request(method, params), spawnFailed]), stepTimeout, name);
    } catch (error) {
      if (error instanceof Fatal) throw error;
      record.error = errorOf(error);
      if (connection.signal.aborted && !tolerateClose) throw new Fatal(`connection closed during ${name}: ${record.error.message}`);
      if (required) throw new Fatal(`${name} failed: ${record.error.code} ${record.error.message}`);
    } finally {
      await settle();
      record.ms = elapsed() - record.atMs;
      // Keep the per-step view light: updates are listed in full under `updates`.
      record.updateKinds = record.updates.map((entry) => entry.update.sessionUpdate);
      record.text = textOf(record.updates);
      delete record.updates;
    }
    return record;
  }
  const stepUpdates = (record) => report.updates.filter((entry) => entry.step === record.step && entry.atMs >= record.atMs);

  async function notify(name, method, params) {
    const record = { step: name, method, params, atMs: elapsed(), notification: true };
    report.steps.push(record);
    try {
      await agentCtx.notify(method, params);
    } catch (error) {
      record.error = errorOf(error);
    }
    return record;
  }

  async function initialize(clientCapabilities) {
    advertised = clientCapabilities;
    report.clientCapabilities = clientCapabilities;
    const record = await step(
      'initialize',
      methods.agent.initialize,
      {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities,
        clientInfo: { name: 'sdk-client', title: 'SDK test client', version: '1.0.0' },
      },
      { required: true },
    );
    report.summary.protocolVersion = record.result.protocolVersion;
    report.summary.agentInfo = record.result.agentInfo ?? null;
    return record.result;
  }
  async function newSession(name = 'session/new') {
    const record = await step(name, methods.agent.session.new, { cwd, mcpServers: [] }, { required: true });
    report.summary.sessionId ??= record.result.sessionId;
    return record.result;
  }
  const prompt = (name, sessionId, text, options) =>
    step(name, methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }, options);

  // --- scenarios ------------------------------------------------------------------------------
  const scenarios = {
    async lifecycle() {
      const init = await initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
      const caps = init.agentCapabilities ?? {};
      const summary = report.summary;
      const authMethod = (init.authMethods ?? []).find((method) => method.type === undefined || method.type === 'agent');
      if (authMethod) {
        const auth = await step('authenticate', methods.agent.authenticate, { methodId: authMethod.id });
        summary.authenticated = !auth.error;
      }
      const session = await newSession();
      const sessionId = session.sessionId;
      summary.modes = session.modes ?? null;
      summary.configOptionIds = (session.configOptions ?? []).map((entry) => entry.id);
      const modes = session.modes?.availableModes ?? [];
      if (modes.length >= 2) {
        const record = await step('session/set_mode', methods.agent.session.setMode, { sessionId, modeId: modes[1].id });
        summary.setMode = record.error ? { error: record.error } : { modeId: modes[1].id };
      }
      const selectable = (session.configOptions ?? []).find((entry) => entry.type === 'select');
      if (selectable) {
        const values = selectable.options.flatMap((entry) => (entry.options ? entry.options : [entry])).map((entry) => entry.value);
        const value = values.find((candidate) => candidate !== selectable.currentValue) ?? selectable.currentValue;
        const record = await step('session/set_config_option', methods.agent.session.setConfigOption, {
          sessionId,
          configId: selectable.id,
          value,
        });
        summary.setConfigOption = record.error
          ? { error: record.error }
          : {
              configId: selectable.id,
              value,
              returnedCount: record.result?.configOptions?.length ?? null,
              returnedValue: record.result?.configOptions?.find((entry) => entry.id === selectable.id)?.currentValue ?? null,
            };
      }
      const hello = await prompt('session/prompt', sessionId, 'hello');
      summary.prompt = { stopReason: hello.result?.stopReason ?? null, text: hello.text, error: hello.error ?? null };
      if (caps.sessionCapabilities?.list) {
        const pages = [];
        let cursor;
        for (let page = 0; page < 20; page += 1) {
          const record = await step(`session/list#${page + 1}`, methods.agent.session.list, cursor ? { cursor } : {});
          if (record.error) {
            pages.push({ error: record.error });
            break;
          }
          pages.push({ sessionIds: record.result.sessions.map((entry) => entry.sessionId), nextCursor: record.result.nextCursor ?? null });
          cursor = record.result.nextCursor;
          if (!cursor) break;
        }
        summary.list = { pages, sessionIds: pages.flatMap((page) => page.sessionIds ?? []) };
        summary.list.includesNewSession = summary.list.sessionIds.includes(sessionId);
      }
      if (caps.loadSession) {
        const record = await step('session/load', methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
        summary.load = { replayed: record.updateKinds, error: record.error ?? null, hasModes: Boolean(record.result?.modes) };
      }
      if (caps.sessionCapabilities?.resume) {
        const record = await step('session/resume', methods.agent.session.resume, { sessionId, cwd, mcpServers: [] });
        summary.resume = { replayed: record.updateKinds, error: record.error ?? null };
      }
      if (caps.sessionCapabilities?.close) {
        const record = await step('session/close', methods.agent.session.close, { sessionId });
        summary.close = { error: record.error ?? null };
      }
      if (caps.sessionCapabilities?.delete) {
        const record = await step('session/delete', methods.agent.session.delete, { sessionId });
        summary.delete = { error: record.error ?? null };
      }
      if (caps.auth?.logout) {
        const record = await step('logout', methods.agent.logout, {});
        summary.logout = { error: record.error ?? null };
      }
    },

    async permission() {
      await initialize({});
      const { sessionId } = await newSession();
      const record = await prompt('session/prompt', sessionId, 'permission');
      const updates = stepUpdates(record);
      report.summary.stopReason = record.result?.stopReason ?? null;
      report.summary.promptError = record.error ?? null;
      report.summary.text = record.text;
      report.summary.permissionRequests = report.served
        .filter((entry) => entry.method === methods.client.session.requestPermission)
        .map((entry) => ({ options: entry.params.options.map((item) => item.optionId), toolCallId: entry.params.toolCall.toolCallId, answer: entry.result?.outcome ?? entry.error }));
      report.summary.toolCallStatuses = updates
        .filter((entry) => entry.update.sessionUpdate === 'tool_call' || entry.update.sessionUpdate === 'tool_call_update')
        .map((entry) => `${entry.update.sessionUpdate}:${entry.update.status ?? ''}`);
    },

    async cancel() {
      await initialize({});
      const { sessionId } = await newSession();
      const pending = prompt('session/prompt', sessionId, 'slow');
      // Cancel a turn that runs: once its first text streams (at most the step timeout). A fixed
      // pause raced the agent: Claude Code, slower to start under load, was interrupted before
      // it had asked its model anything.
      let timer;
      await Promise.race([new Promise((done) => (textStreamed = done)), pending, new Promise((done) => (timer = setTimeout(done, stepTimeout)))]);
      clearTimeout(timer);
      textStreamed = null;
      const chunksBeforeCancel = report.updates.length;
      cancelSentAt = elapsed();
      await notify('session/cancel', methods.agent.session.cancel, { sessionId });
      const record = await pending;
      cancelSentAt = null;
      report.summary.stopReason = record.result?.stopReason ?? null;
      report.summary.promptError = record.error ?? null;
      report.summary.updatesBeforeCancel = chunksBeforeCancel;
      report.summary.updatesAfterCancel = report.updates.filter((entry) => entry.afterCancel).length;
      report.summary.msFromCancelToStop = record.atMs + record.ms - report.steps.find((entry) => entry.notification).atMs;
      const after = await prompt('prompt_after_cancel', sessionId, 'hello');
      report.summary.afterCancel = { stopReason: after.result?.stopReason ?? null, text: after.text, error: after.error ?? null };
    },

    async errors() {
      const codes = {};
      const early = await prompt('prompt_before_initialize', 'no-session', 'hi');
      codes.prompt_before_initialize = early.error?.code ?? null;
      await initialize({});
      const unknown = await step('unknown_method', '_nope/x', {});
      codes.unknown_method = unknown.error?.code ?? null;
      await notify('unknown_notification', '_nope/notify', { hello: true });
      const invalid = await step('invalid_params', methods.agent.session.new, { cwd: 5, mcpServers: [] });
      codes.invalid_params = invalid.error?.code ?? null;
      const relative = await step('relative_cwd', methods.agent.session.new, { cwd: 'relative/dir', mcpServers: [] });
      codes.relative_cwd = relative.error?.code ?? null;
      const missing = await prompt('unknown_session', 'no-such-session', 'hi');
      codes.unknown_session = missing.error?.code ?? null;
      const { sessionId } = await newSession('session/new_after_errors');
      const alive = await prompt('prompt_after_errors', sessionId, 'ping');
      report.summary.codes = codes;
      report.summary.aliveAfterErrors = alive.result?.stopReason === 'end_turn';
      report.summary.echo = alive.text;
    },

    async fs() {
      await initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: false });
      const { sessionId } = await newSession();
      const record = await prompt('session/prompt', sessionId, 'fs');
      report.summary.stopReason = record.result?.stopReason ?? null;
      report.summary.promptError = record.error ?? null;
      report.summary.text = record.text;
      report.summary.fsRequests = report.served
        .filter((entry) => entry.method.startsWith('fs/'))
        .map((entry) => ({ method: entry.method, path: entry.params.path, ok: !entry.error, code: entry.error?.code ?? null }));
      try {
        report.summary.notesOnDisk = await readFile(join(cwd, 'notes.txt'), 'utf8');
      } catch (error) {
        report.summary.notesOnDisk = null;
      }
    },

    async terminal() {
      await initialize({ fs: { readTextFile: false, writeTextFile: false }, terminal: true });
      const { sessionId } = await newSession();
      const record = await prompt('session/prompt', sessionId, 'terminal');
      const updates = stepUpdates(record);
      report.summary.stopReason = record.result?.stopReason ?? null;
      report.summary.promptError = record.error ?? null;
      report.summary.text = record.text;
      report.summary.terminalRequests = report.served
        .filter((entry) => entry.method.startsWith('terminal/'))
        .map((entry) => ({ method: entry.method, ok: !entry.error, result: entry.result ?? null, code: entry.error?.code ?? null }));
      report.summary.terminalToolCalls = updates
        .filter((entry) => (entry.update.content ?? []).some?.((item) => item.type === 'terminal'))
        .map((entry) => ({ toolCallId: entry.update.toolCallId, status: entry.update.status ?? null, terminalIds: entry.update.content.filter((item) => item.type === 'terminal').map((item) => item.terminalId) }));
      report.summary.terminalsLeftUnreleased = [...terminals.keys()];
    },

    async die() {
      await initialize({});
      const { sessionId } = await newSession();
      const record = await prompt('session/prompt', sessionId, 'die', { tolerateClose: true });
      await withTimeout(exited, 5000, 'agent exit after die');
      report.summary.promptError = record.error ?? null;
      report.summary.stopReason = record.result?.stopReason ?? null;
      report.summary.textBeforeDeath = record.text;
      report.summary.connectionClosed = connection.signal.aborted;
      report.summary.agentExitCode = report.agentExit?.code ?? null;
    },
  };

  // --- run, then always shut the agent down -------------------------------------------------------
  let failure = null;
  try {
    await scenarios[scenario]();
  } catch (error) {
    failure = error;
  }
  await shutdown();
  clearTimeout(overall);
  if (failure) return fail(failure);
  report.ok = true;
  emit(0);

  async function shutdown() {
    shuttingDown = true;
    for (const terminal of terminals.values()) if (!terminal.exitStatus) terminal.child?.kill('SIGKILL');
    connection.close();
    child.stdin.end();
    const group = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // group already gone
      }
    };
    if (child.pid !== undefined) {
      if (report.agentExit === null) {
        await Promise.race([exited, sleep(2000)]);
      }
      if (report.agentExit === null) {
        group('SIGTERM');
        await Promise.race([exited, sleep(2000)]);
      }
      if (report.agentExit === null) {
        group('SIGKILL');
        await Promise.race([exited, sleep(1000)]);
      }
      group('SIGKILL'); // stragglers left in the agent's process group
    }
    if (ownsCwd && !keep) rmSync(cwd, { recursive: true, force: true });
  }

  function fail(error) {
    report.ok = false;
    report.error = { message: String(error?.message ?? error), ...(typeof error?.code === 'number' ? { code: error.code } : {}) };
    if (!shuttingDown) {
      // overall timeout: make sure nothing is left behind before reporting
      shutdown().finally(() => emit(1));
      return;
    }
    emit(1);
  }
}
