/**
 * An editor as a test harness holding the pipes of a real `warden acp` process: it writes
 * JSON-RPC lines to warden's stdin and reads its stdout line by line, and it can stop
 * reading for a while (`pauseReading`), as a slow or busy editor does: the pipe fills and
 * warden must wait. Warden and the agents are found the way a user's shell finds them: bare
 * names on PATH (`warden` a shim of this checkout's CLI; `binDir` holds symlinks to the fakes).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binDirectory } from './path-editor.js';

/** The bin directory with the `warden` shim of {@link binDirectory}: made on first use, removed when the test process exits. */
let wardenBin: string | undefined;
function wardenBinDir(): string {
  if (wardenBin === undefined) {
    const root = mkdtempSync(join(tmpdir(), 'warden-command-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    wardenBin = binDirectory(root);
  }
  return wardenBin;
}

/** A message warden wrote. */
export type WireMessage = { id?: string | number | null; method?: string; params?: any; result?: any; error?: { code: number; message: string; data?: any } };

/** A directory with `name → target` symlinks, to put first on PATH. */
export function binDirWith(links: Record<string, string>): { dir: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'warden-bin-'));
  const dir = join(root, 'bin');
  mkdirSync(dir);
  for (const [name, target] of Object.entries(links)) {
    chmodSync(target, 0o755);
    symlinkSync(target, join(dir, name));
  }
  return { dir, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** A test's temporary directory, store, bin directory and editor: see {@link pipeEditorWorld}. */
export interface PipeEditorWorld {
  /** A fresh temporary directory (its real path), removed after each test. */
  readonly dir: string;
  /** `journal.sqlite` in `dir` (not created). */
  readonly store: string;
  /** The bin directory of {@link binDirWith}, removed after each test. */
  readonly bin: { readonly dir: string; remove(): void };
  /** The test's editor: closed after each test. */
  editor: PipeEditor | undefined;
}

/**
 * Registers, in the calling `describe`, the hooks that give each test a fresh
 * {@link PipeEditorWorld} (a directory named `prefix…`, the `links` bin directory) and close
 * its editor and remove both afterwards.
 */
export function pipeEditorWorld(prefix: string, links: Record<string, string>): PipeEditorWorld {
  let dir = '';
  let store = '';
  let bin: ReturnType<typeof binDirWith> | undefined;
  const world: PipeEditorWorld = {
    get dir() {
      return dir;
    },
    get store() {
      return store;
    },
    get bin() {
      return bin as ReturnType<typeof binDirWith>;
    },
    editor: undefined,
  };

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    store = join(dir, 'journal.sqlite');
    bin = binDirWith(links);
  });

  afterEach(async () => {
    await world.editor?.close();
    world.editor = undefined;
    await PipeEditor.closeAll();
    bin?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  return world;
}

/** Options of {@link PipeEditor.launch}. */
export interface LaunchOptions {
  /** `warden acp` arguments. */
  readonly args: readonly string[];
  /** Put first on warden's PATH. */
  readonly binDir?: string;
  readonly env?: Record<string, string>;
  /** Called for each message (instead of keeping notifications). */
  readonly onMessage?: (message: WireMessage) => void;
  /** Called with each line as warden wrote it, before it is parsed. */
  readonly onLine?: (line: string) => void;
}

export class PipeEditor {
  /** Every warden launched and not seen to exit: {@link PipeEditor.closeAll} ends them. */
  static readonly #launched = new Set<PipeEditor>();
  readonly child: ChildProcessWithoutNullStreams;
  readonly notifications: WireMessage[] = [];
  stderr = '';
  readonly #waiters = new Map<string | number, (message: WireMessage) => void>();
  readonly #answers = new Map<string | number, WireMessage>();
  readonly #onMessage: ((message: WireMessage) => void) | undefined;
  readonly #onLine: ((line: string) => void) | undefined;
  #pending = '';
  #nextId = 1;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;

  private constructor(options: LaunchOptions) {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...options.env };
    delete env.CLAUDE_CODE_EXECUTABLE;
    delete env.CODEX_PATH;
    env.PATH = [options.binDir, wardenBinDir(), env.PATH ?? ''].filter((dir) => dir !== undefined).join(':');
    this.#onMessage = options.onMessage;
    this.#onLine = options.onLine;
    this.child = spawn('warden', ['acp', ...options.args], { stdio: ['pipe', 'pipe', 'pipe'], env });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.#read(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-20_000);
    });
    this.child.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
    PipeEditor.#launched.add(this);
    void this.exited.then(() => PipeEditor.#launched.delete(this));
  }

  static launch(options: LaunchOptions): PipeEditor {
    return new PipeEditor(options);
  }

  /**
   * Closes every warden still running (for afterEach: a test that failed midway may have lost
   * its handle on one); each gets `graceMs` to exit after its stdin closes, then SIGKILL.
   */
  static async closeAll(graceMs = 20_000): Promise<void> {
    await Promise.all([...PipeEditor.#launched].map((editor) => editor.close(graceMs)));
  }

  /** Writes one raw line (a newline is added). */
  writeLine(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** Sends a request and resolves with warden's answer (result or error). */
  request(method: string, params: unknown = {}, id: string | number = this.#nextId++): Promise<WireMessage> {
    const answer = this.answer(id);
    this.writeLine(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return answer;
  }

  /** The answer with `id`, when it comes. */
  answer(id: string | number): Promise<WireMessage> {
    const known = this.#answers.get(id);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => this.#waiters.set(id, resolve));
  }

  /** Stops reading stdout: warden's writes fill the pipe. */
  pauseReading(): void {
    this.child.stdout.pause();
  }

  resumeReading(): void {
    this.child.stdout.resume();
  }

  /**
   * Whether the editor's read buffer of warden's stdout is full: paused, it has stopped taking
   * from the pipe, so warden's writes now fill the pipe and then wait.
   */
  get backedUp(): boolean {
    return this.child.stdout.isPaused() && this.child.stdout.readableLength >= this.child.stdout.readableHighWaterMark;
  }

  /** Warden's peak resident memory so far (VmHWM), in MB. */
  peakRssMb(): number {
    const status = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    return Math.round(kb / 102.4) / 10;
  }

  /** Whether warden is still running. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Closes warden's stdin (the editor goes away) and waits for it to exit; kills it after `graceMs`. */
  async close(graceMs = 20_000): Promise<{ code: number | null; signal: string | null }> {
    this.child.stdout.resume();
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  #read(chunk: string): void {
    this.#pending += chunk;
    let start = 0;
    let newline: number;
    while ((newline = this.#pending.indexOf('\n', start)) >= 0) {
      const line = this.#pending.slice(start, newline);
      start = newline + 1;
      if (line.length === 0) continue;
      this.#onLine?.(line);
      this.#dispatch(JSON.parse(line) as WireMessage);
    }
    this.#pending = this.#pending.slice(start);
  }

  #dispatch(message: WireMessage): void {
    if (this.#onMessage) this.#onMessage(message);
    else if (message.method !== undefined && message.id === undefined) this.notifications.push(message);
    const isAnswer = message.method === undefined && message.id !== undefined && message.id !== null;
    if (!isAnswer) return;
    const id = message.id as string | number;
    const waiter = this.#waiters.get(id);
    if (waiter) {
      this.#waiters.delete(id);
      waiter(message);
    } else if (!this.#onMessage) {
      this.#answers.set(id, message);
    }
  }
}

/** `initialize` then `session/new`; resolves with the session id. */
export async function openSession(editor: PipeEditor, cwd: string, clientCapabilities: Record<string, unknown> = {}): Promise<string> {
  const init = await editor.request('initialize', { protocolVersion: 1, clientCapabilities, clientInfo: { name: 'pipe-editor', version: '1' } });
  if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}\n${editor.stderr}`);
  const created = await editor.request('session/new', { cwd, mcpServers: [] });
  if (created.error) throw new Error(`session/new failed: ${JSON.stringify(created.error)}\n${editor.stderr}`);
  return created.result.sessionId as string;
}
