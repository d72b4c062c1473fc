import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keepTail } from '../../src/acp/terminals.js';
import { confine, readTextFile, writeTextFile } from '../../src/acp/workspace-fs.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';

describe('workspace-confined files', () => {
  let root: string;
  let outside: string;
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'warden-ws-')));
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'warden-out-')));
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    writeFileSync(join(root, 'notes.txt'), 'one\ntwo\nthree\nfour\n');
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  async function refusal(promise: Promise<unknown>): Promise<RpcError> {
    const error = await promise.then(() => undefined, (caught: unknown) => caught);
    expect(error).to.be.instanceOf(RpcError);
    return error as RpcError;
  }

  it('refuses relative paths, traversal and symbolic links that lead out of the workspace', async () => {
    symlinkSync(outside, join(root, 'escape'));
    expect((await refusal(confine('notes.txt', [root]))).code).to.equal(-32602);
    expect((await refusal(confine(join(root, '..', 'etc', 'passwd'), [root]))).message).to.contain('outside the workspace');
    expect((await refusal(readTextFile({ path: join(root, 'escape', 'secret.txt') }, [root]))).code).to.equal(-32602);
    expect((await refusal(writeTextFile({ path: join(root, 'escape', 'new.txt'), content: 'x' }, [root]))).code).to.equal(-32602);
    expect((await refusal(confine(join(root, 'notes.txt'), []))).message).to.contain('no workspace roots');
  });

  it('reads whole files or line ranges (1-based), writes new files with their directories', async () => {
    expect(await readTextFile({ path: join(root, 'notes.txt') }, [root])).to.deep.equal({ content: 'one\ntwo\nthree\nfour\n' });
    expect(await readTextFile({ path: join(root, 'notes.txt'), line: 2, limit: 2 }, [root])).to.deep.equal({ content: 'two\nthree' });
    await writeTextFile({ path: join(root, 'deep', 'dir', 'new.txt'), content: 'hello' }, [root]);
    expect(await readTextFile({ path: join(root, 'deep', 'dir', 'new.txt') }, [root])).to.deep.equal({ content: 'hello' });
    expect((await refusal(readTextFile({ path: join(root, 'missing.txt') }, [root]))).code).to.equal(-32002);
  });

  it('refuses a write through a dangling symbolic link whose target is outside, creating nothing there', async () => {
    symlinkSync(join(outside, 'planted.txt'), join(root, 'dangling'));
    const error = await refusal(writeTextFile({ path: join(root, 'dangling'), content: 'x' }, [root]));
    expect(error.code).to.equal(-32602);
    expect(error.message).to.contain(join(root, 'dangling')).and.to.contain('outside the workspace');
    expect(existsSync(join(outside, 'planted.txt'))).to.equal(false);
  });

  it('follows a symbolic link whose target is inside the workspace, for reads and writes (also a dangling one)', async () => {
    symlinkSync('notes.txt', join(root, 'AGENTS.md'));
    expect(await readTextFile({ path: join(root, 'AGENTS.md'), line: 1, limit: 1 }, [root])).to.deep.equal({ content: 'one' });
    await writeTextFile({ path: join(root, 'AGENTS.md'), content: 'rewritten' }, [root]);
    expect(readFileSync(join(root, 'notes.txt'), 'utf8')).to.equal('rewritten');
    symlinkSync('later.txt', join(root, 'pending'));
    await writeTextFile({ path: join(root, 'pending'), content: 'made' }, [root]);
    expect(readFileSync(join(root, 'later.txt'), 'utf8')).to.equal('made');
  });

  it('refuses FIFOs without hanging, for reads and writes', async () => {
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const read = await refusal(readTextFile({ path: join(root, 'pipe') }, [root]));
    expect(read.code).to.equal(-32602);
    expect(read.message).to.contain(join(root, 'pipe')).and.to.contain('not a regular file');
    const write = await refusal(writeTextFile({ path: join(root, 'pipe'), content: 'x' }, [root]));
    expect(write.message).to.contain('not a regular file');
  });

  it('refuses devices even inside a root, for reads and writes', async () => {
    const read = await refusal(readTextFile({ path: '/dev/null' }, [root, '/dev']));
    expect(read.code).to.equal(-32602);
    expect(read.message).to.contain('/dev/null').and.to.contain('not a regular file');
    expect((await refusal(writeTextFile({ path: '/dev/null', content: 'x' }, [root, '/dev']))).message).to.contain('not a regular file');
    expect((await refusal(writeTextFile({ path: root, content: 'x' }, [root]))).message).to.contain('not a regular file');
  });

  it('refuses a path through a file as if it were a directory with -32602 naming it', async () => {
    const path = join(root, 'notes.txt', 'child.txt');
    for (const error of [await refusal(writeTextFile({ path, content: 'x' }, [root])), await refusal(readTextFile({ path }, [root]))]) {
      expect(error.code).to.equal(-32602);
      expect(error.message).to.contain(path).and.to.contain('not a directory');
    }
  });

  it('keeps the mode of a file it rewrites, and leaves no temporary file behind', async () => {
    chmodSync(join(root, 'notes.txt'), 0o640);
    await writeTextFile({ path: join(root, 'notes.txt'), content: 'new' }, [root]);
    expect(statSync(join(root, 'notes.txt')).mode & 0o777).to.equal(0o640);
    expect(readdirSync(root)).to.deep.equal(['notes.txt']);
  });

  it('never writes to the host\'s own stdout through a link to /proc/self/fd/1', async function () {
    this.timeout(60_000);
    // A program embedding warden, as a library user runs it: its stdout is a pipe (the ACP
    // channel of `warden acp`); nothing may ever reach it through the workspace.
    symlinkSync('/proc/self/fd/1', join(root, 'out.txt'));
    symlinkSync('/proc/self/fd', join(root, 'fds'));
    const module = fileURLToPath(new URL('../../src/acp/workspace-fs.ts', import.meta.url));
    const script = `
      import { readTextFile, writeTextFile } from ${JSON.stringify(module)};
      const root = ${JSON.stringify(root)};
      const codes = [];
      for (const path of [root + '/out.txt', root + '/fds/1', root + '/fds/2']) {
        await writeTextFile({ path, content: 'LEAKED\\n' }, [root]).then(() => codes.push('written'), (error) => codes.push(error.code));
        await readTextFile({ path }, [root]).then(() => codes.push('read'), (error) => codes.push(error.code));
      }
      process.stderr.write(JSON.stringify(codes));
    `;
    // Through `| cat`, its stdout is a pipe, as an editor like Zed makes it (Node's own
    // spawn would give a socket, which cannot be reopened through /proc).
    const child = spawn('sh', ['-c', '"$0" --import tsx --input-type=module -e "$1" | cat', process.execPath, script], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    // Unconfined, a read through the link blocks on the pipe forever: end the group after a
    // generous deadline, so the test fails on what it printed instead of leaving it running.
    const deadline = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), 30_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await new Promise((resolve) => child.on('close', resolve));
    clearTimeout(deadline);
    expect(stdout).to.equal('');
    expect(JSON.parse(stderr), stderr).to.deep.equal([-32602, -32602, -32602, -32602, -32602, -32602]);
  });

  it('never lets a directory swapped for a link to outside, during many writes, put a file outside', async function () {
    this.timeout(120_000);
    // A real process flips <root>/d between a directory of the workspace and a link to
    // `outside`, and <root>/flip between a link inside and one outside, a bounded number of
    // times, while we write into both for as long as it runs.
    mkdirSync(join(root, 'd'));
    mkdirSync(join(root, 'link-target'));
    symlinkSync(join(root, 'link-target'), join(root, 'flip'));
    const swapper = spawn(process.execPath, ['-e', `
      const fs = require('node:fs');
      const [root, outside] = process.argv.slice(1);
      const quiet = (f) => { try { f(); } catch {} };
      process.stdout.write('ready\\n');
      for (let i = 0; i < 20000; i++) {
        quiet(() => fs.renameSync(root + '/d', root + '/d-real'));
        quiet(() => fs.symlinkSync(outside, root + '/d'));
        quiet(() => fs.unlinkSync(root + '/d'));
        quiet(() => fs.renameSync(root + '/d-real', root + '/d'));
        quiet(() => fs.unlinkSync(root + '/flip'));
        quiet(() => fs.symlinkSync(i % 2 ? outside : root + '/link-target', root + '/flip'));
      }
    `, root, outside], { stdio: ['ignore', 'pipe', 'ignore'] });
    const swapperDone = new Promise((resolve) => swapper.on('exit', resolve));
    await new Promise((resolve) => swapper.stdout.once('data', resolve));
    try {
      const outcomes = new Set<string>();
      for (let i = 0; i < 5000 && swapper.exitCode === null; i++) {
        const dir = ['d', 'flip', join('d', 'sub')][i % 3] as string;
        await writeTextFile({ path: join(root, dir, `f${i}.txt`), content: `w${i}` }, [root]).then(
          () => outcomes.add('written'),
          (error: unknown) => {
            outcomes.add(error instanceof RpcError ? String(error.code) : String(error));
            // A refusal names the path asked for, even when it is the descriptor check that caught it.
            if (error instanceof RpcError && error.code === -32602) expect(error.message).to.contain(`f${i}.txt`);
          },
        );
        expect(readdirSync(outside).filter((name) => name !== 'secret.txt'), `after write ${i}`).to.deep.equal([]);
      }
      // Only a write or a refusal, never a crash.
      for (const outcome of outcomes) expect(['written', '-32602', '-32002', '-32603']).to.include(outcome);
    } finally {
      if (swapper.exitCode === null) swapper.kill('SIGKILL');
      await swapperDone;
    }
    expect(readdirSync(outside)).to.deep.equal(['secret.txt']);
  });

  it('allows every root of the session (cwd and additional directories)', async () => {
    mkdirSync(join(outside, 'sub'));
    expect(await confine(join(outside, 'sub', 'x.txt'), [root, outside])).to.equal(join(outside, 'sub', 'x.txt'));
  });
});

describe('terminal output limit', () => {
  it('drops from the start at a character boundary', () => {
    expect(keepTail('abcdef', 10)).to.deep.equal({ text: 'abcdef', truncated: false });
    expect(keepTail('abcdef', 3)).to.deep.equal({ text: 'def', truncated: true });
    // "é" is two bytes: cutting inside it drops the whole character.
    expect(keepTail('aéb', 2)).to.deep.equal({ text: 'b', truncated: true });
    expect(keepTail('aéb', 3)).to.deep.equal({ text: 'éb', truncated: true });
  });
});
