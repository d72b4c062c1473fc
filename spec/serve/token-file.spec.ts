import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { defaultTokenPath, readOrCreateToken } from '../../src/serve/token-file.js';

const racer = new URL('../support/token-racer.ts', import.meta.url).pathname;

async function refusal(path: string): Promise<Error> {
  try {
    await readOrCreateToken(path);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`readOrCreateToken(${path}) was expected to refuse`);
}

describe('serve: token file (readOrCreateToken)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-token-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a missing file 0600, in a new 0700 directory, holding a 43-character base64url token, and reads the same one back', async () => {
    const path = join(dir, 'state', 'acp-warden', 'token');
    const token = await readOrCreateToken(path);
    expect(token).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(path).mode & 0o777).to.equal(0o600);
    expect(statSync(join(dir, 'state', 'acp-warden')).mode & 0o777).to.equal(0o700);
    expect(readFileSync(path, 'utf8').trim()).to.equal(token);
    expect(await readOrCreateToken(path)).to.equal(token);
    expect(await readOrCreateToken(join(dir, 'other'))).to.not.equal(token);
  });

  it('reads a token the user wrote, trimmed of its newline', async () => {
    const path = join(dir, 'token');
    writeFileSync(path, 'my-own.token~42\n', { mode: 0o600 });
    expect(await readOrCreateToken(path)).to.equal('my-own.token~42');
  });

  it('refuses a file others can read (0644), naming the path and chmod 600, and leaves it as it was', async () => {
    const path = join(dir, 'token');
    writeFileSync(path, 'secret\n');
    chmodSync(path, 0o644);
    const error = await refusal(path);
    expect(error.message).to.include(path).and.include(`chmod 600 ${path}`).and.include('644');
    expect(readFileSync(path, 'utf8')).to.equal('secret\n');
    chmodSync(path, 0o640);
    expect((await refusal(path)).message).to.include(`chmod 600 ${path}`);
  });

  it('refuses an empty (or blank) file and a directory, naming the path', async () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '', { mode: 0o600 });
    expect((await refusal(empty)).message).to.include(empty).and.include('empty');
    writeFileSync(empty, ' \n\n', { mode: 0o600 });
    expect((await refusal(empty)).message).to.include(empty).and.include('empty');
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    expect((await refusal(folder)).message).to.include(folder).and.include('is a directory');
  });

  it('names the token file and --token-file when a file stands where its directory should be', async () => {
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const path = join(blocker, 'token');
    const error = await refusal(path);
    expect(error.message).to.include(`token file ${path}:`).and.include('--token-file');
  });

  it('refuses a token with a space or a control character inside (a header could not carry it)', async () => {
    const path = join(dir, 'token');
    writeFileSync(path, 'two words\n', { mode: 0o600 });
    expect((await refusal(path)).message).to.include(path).and.include('printable ASCII');
  });

  it('gives every one of several processes racing to create the file the same token, the one on disk', async function () {
    this.timeout(60_000);
    const path = join(dir, 'race', 'token');
    const children: ChildProcess[] = [];
    try {
      const lines = Array.from({ length: 6 }, () => {
        const child = spawn(process.execPath, ['--import', 'tsx', racer, path], { stdio: ['pipe', 'pipe', 'inherit'] });
        children.push(child);
        const reader = createInterface({ input: child.stdout! });
        const next = () => new Promise<string>((resolve, reject) => {
          reader.once('line', resolve);
          child.once('exit', (code) => reject(new Error(`racer exited (${code}) before answering`)));
        });
        return { child, next };
      });
      // Every racer loaded and waiting: then all are told to go at once.
      expect(await Promise.all(lines.map(({ next }) => next()))).to.deep.equal(Array(6).fill('ready'));
      const answers = lines.map(({ next }) => next());
      for (const { child } of lines) child.stdin!.end('go\n');
      const results = await Promise.all(answers);
      const onDisk = readFileSync(path, 'utf8').trim();
      expect(onDisk).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(results).to.deep.equal(Array(6).fill(`token ${onDisk}`));
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      // No temp file left beside it by the losers (or the winner).
      expect(readdirSync(join(dir, 'race'))).to.deep.equal(['token']);
      const exits = await Promise.all(children.map((child) => child.exitCode ?? new Promise<number | null>((resolve) => child.once('exit', resolve))));
      expect(exits).to.deep.equal(Array(6).fill(0));
    } finally {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

describe('serve: defaultTokenPath', () => {
  const home = '/home/ada';
  const rows: Array<[string, NodeJS.ProcessEnv, NodeJS.Platform, string]> = [
    ['Linux with XDG_STATE_HOME', { XDG_STATE_HOME: '/xdg/state' }, 'linux', '/xdg/state/acp-warden/token'],
    ['Linux without it', {}, 'linux', '/home/ada/.local/state/acp-warden/token'],
    ['Linux with a relative XDG_STATE_HOME (ignored, as the spec says)', { XDG_STATE_HOME: 'state' }, 'linux', '/home/ada/.local/state/acp-warden/token'],
    ['FreeBSD (the XDG rule)', {}, 'freebsd', '/home/ada/.local/state/acp-warden/token'],
    ['macOS', { XDG_STATE_HOME: '/xdg/state' }, 'darwin', '/home/ada/Library/Application Support/acp-warden/token'],
    ['Windows with LOCALAPPDATA', { LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local' }, 'win32', 'C:\\Users\\ada\\AppData\\Local\\acp-warden\\token'],
  ];
  for (const [what, env, platform, expected] of rows) {
    it(`is ${expected} on ${what}`, () => {
      expect(defaultTokenPath(env, platform, home)).to.equal(expected);
    });
  }
  it('falls back to the home folder\'s AppData\\Local on Windows without LOCALAPPDATA', () => {
    expect(defaultTokenPath({}, 'win32', 'C:\\Users\\ada')).to.equal('C:\\Users\\ada\\AppData\\Local\\acp-warden\\token');
  });
});
