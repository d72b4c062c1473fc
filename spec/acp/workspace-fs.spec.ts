import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keepTail } from '../../src/acp/terminals.js';
import { confine, readTextFile, writeTextFile } from '../../src/acp/workspace-fs.js';
import { createHost } from '../../src/runtime/host.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

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

  it('one refusal for a path outside the workspace, whichever check finds it (the path, a link, the target of a dangling link): one message, one data shape', async () => {
    symlinkSync(outside, join(root, 'escape'));
    symlinkSync(join(outside, 'planted.txt'), join(root, 'dangling'));
    const rule = 'outside the workspace';
    const traversal = join(root, '..', 'etc', 'passwd');
    const byPath = await refusal(confine(traversal, [root]));
    expect([byPath.code, byPath.message, byPath.data]).to.deep.equal([-32602, `Invalid params: ${rule}: ${traversal}`, { path: traversal, rule, roots: [root] }]);
    const throughLink = join(root, 'escape', 'secret.txt');
    const byLink = await refusal(readTextFile({ path: throughLink }, [root]));
    expect([byLink.code, byLink.message, byLink.data]).to.deep.equal([-32602, `Invalid params: ${rule}: ${throughLink}`, { path: throughLink, rule, roots: [root] }]);
    const dangling = join(root, 'dangling');
    const byTarget = await refusal(writeTextFile({ path: dangling, content: 'x' }, [root]));
    expect([byTarget.code, byTarget.message, byTarget.data]).to.deep.equal([-32602, `Invalid params: ${rule}: ${dangling}`, { path: dangling, rule, roots: [root], target: join(outside, 'planted.txt') }]);
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

// Issue 28, defect 8: a second name of an outside file's inode passed every check of what was
// opened (its real path is inside), so the host served the outside file's content.
describe('hard links (a native agent reading and writing through the host)', () => {
  let root: string;
  let outside: string;
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'warden-links-')));
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'warden-links-out-')));
    writeFileSync(join(outside, 'secret.txt'), 'the outside secret');
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  /** What the SDK agent, run by a real host as `acp:node`, said for one prompt. */
  async function said(host: ReturnType<typeof createHost>, prompt: string): Promise<string> {
    const session = await host.newSession({ cwd: root, agent: `acp:node ${sdkAgent}` });
    const run = session.prompt(prompt);
    let text = '';
    for await (const update of run) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') text += update.content.text;
    await run.result;
    return text;
  }

  it('refuses a read of a hard-linked file (-32602 naming the link count and the fix), never serving the outside file it shares an inode with', async function () {
    this.timeout(60_000);
    linkSync(join(outside, 'secret.txt'), join(root, 'innocent.txt'));
    // Both names inside are refused too: warden cannot see where an inode's other names are.
    writeFileSync(join(root, 'a.txt'), 'inside twice');
    linkSync(join(root, 'a.txt'), join(root, 'b.txt'));
    writeFileSync(join(root, 'own.txt'), 'single');
    const host = createHost({ store: ':memory:' });
    try {
      const refused = await said(host, `read ${join(root, 'innocent.txt')}`);
      expect(refused).to.not.contain('the outside secret');
      expect(refused).to.match(/^read refused: -32602 Invalid params: /);
      expect(refused).to.contain(`hard-linked file (2 names; the others may be outside the workspace): ${join(root, 'innocent.txt')}`);
      expect(refused).to.contain('cp -p').and.to.contain('files.linkStores');
      expect(JSON.parse(refused.slice(refused.lastIndexOf(' {')))).to.deep.include({ path: join(root, 'innocent.txt'), rule: 'hard-linked file', links: 2 });
      expect(await said(host, `read ${join(root, 'b.txt')}`)).to.match(/^read refused: -32602 Invalid params: hard-linked file/);
      expect(await said(host, `read ${join(root, 'own.txt')}`)).to.equal('read: single');
    } finally {
      await host.stop();
    }
  });

  it('a write to a hard-linked file replaces the workspace\'s name only: the outside file keeps its content, the new file is the workspace\'s own', async function () {
    this.timeout(60_000);
    const secret = join(outside, 'secret.txt');
    linkSync(secret, join(root, 'innocent.txt'));
    const host = createHost({ store: ':memory:' });
    try {
      expect(await said(host, `write ${join(root, 'innocent.txt')} rewritten by the agent`)).to.equal('written');
      expect(readFileSync(secret, 'utf8')).to.equal('the outside secret');
      expect(statSync(secret).nlink).to.equal(1);
      expect(statSync(join(root, 'innocent.txt')).nlink).to.equal(1);
      // Now single-linked, it reads.
      expect(await said(host, `read ${join(root, 'innocent.txt')}`)).to.equal('read: rewritten by the agent');
    } finally {
      await host.stop();
    }
  });

  it('files.linkStores: a file linked from a pnpm store (its name there the sha512 of its content) reads; a store file under another name, or a store not named, does not', async function () {
    this.timeout(60_000);
    // A pnpm store as `pnpm store path` names it: files/<2 hex>/<126 hex>[-exec].
    const store = join(outside, 'store', 'v10');
    const content = 'module.exports = 42;\n';
    const hex = createHash('sha512').update(content).digest('hex');
    mkdirSync(join(store, 'files', hex.slice(0, 2)), { recursive: true });
    writeFileSync(join(store, 'files', hex.slice(0, 2), hex.slice(2)), content);
    const bin = '#!/bin/sh\necho hi\n';
    const binHex = createHash('sha512').update(bin).digest('hex');
    mkdirSync(join(store, 'files', binHex.slice(0, 2)), { recursive: true });
    writeFileSync(join(store, 'files', binHex.slice(0, 2), `${binHex.slice(2)}-exec`), bin, { mode: 0o755 });
    const pkg = join(root, 'node_modules', '.pnpm', 'answer@1.0.0', 'node_modules', 'answer');
    mkdirSync(pkg, { recursive: true });
    linkSync(join(store, 'files', hex.slice(0, 2), hex.slice(2)), join(pkg, 'index.js'));
    linkSync(join(store, 'files', binHex.slice(0, 2), `${binHex.slice(2)}-exec`), join(pkg, 'cli.sh'));
    // The secret placed in the store under a name that is not its content's hash.
    mkdirSync(join(store, 'files', 'ab'), { recursive: true });
    linkSync(join(outside, 'secret.txt'), join(store, 'files', 'ab', 'c'.repeat(126)));
    linkSync(join(outside, 'secret.txt'), join(pkg, 'README.md'));
    expect(() => createHost({ store: ':memory:', files: { linkStores: ['relative/store'] } })).to.throw(TypeError, 'linkStores');
    const host = createHost({ store: ':memory:', files: { linkStores: [store] } });
    try {
      expect(await said(host, `read ${join(pkg, 'index.js')}`)).to.equal(`read: ${content}`);
      expect(await said(host, `read ${join(pkg, 'cli.sh')}`)).to.equal(`read: ${bin}`);
      const refused = await said(host, `read ${join(pkg, 'README.md')}`);
      expect(refused).to.match(/^read refused: -32602 Invalid params: hard-linked file/);
      expect(refused).to.not.contain('the outside secret');
    } finally {
      await host.stop();
    }
    const unnamed = createHost({ store: ':memory:' });
    try {
      expect(await said(unnamed, `read ${join(pkg, 'index.js')}`)).to.match(/^read refused: -32602 Invalid params: hard-linked file/);
    } finally {
      await unnamed.stop();
    }
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

describe('fs/read_text_file size limit and line ranges', () => {
  let root: string;
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'warden-read-')));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  async function refusal(promise: Promise<unknown>): Promise<RpcError> {
    const error = await promise.then(() => undefined, (caught: unknown) => caught);
    expect(error).to.be.instanceOf(RpcError);
    return error as RpcError;
  }

  it('a file over the default 64 MiB (a sparse 65 MiB file) is refused -32602 naming the limit, before it is read', async () => {
    const big = join(root, 'big.bin');
    writeFileSync(big, '');
    truncateSync(big, 65 * 1024 * 1024);
    const refused = await refusal(readTextFile({ path: big }, [root]));
    expect(refused.code).to.equal(-32602);
    expect(refused.message).to.contain('limit of 64 MiB').and.to.contain('line and limit');
    expect(refused.data).to.deep.include({ path: big, maxReadBytes: 64 * 1024 * 1024, reason: 'file_too_large' });
  });

  it('maxReadBytes: a whole file over it is refused; a line range of it is streamed and answered; a range over it is refused', async () => {
    // 3 MiB of numbered lines against a 64 KiB limit.
    const lines = Array.from({ length: 60_000 }, (_, index) => `line ${index + 1} ${'x'.repeat(index % 90)}`);
    const path = join(root, 'log.txt');
    writeFileSync(path, `${lines.join('\n')}\n`);
    const limits = { maxReadBytes: 64 * 1024 };
    expect((await refusal(readTextFile({ path }, [root], limits))).message).to.contain('limit of 65536 bytes');
    expect(await readTextFile({ path, line: 50_000, limit: 3 }, [root], limits)).to.deep.equal({ content: lines.slice(49_999, 50_002).join('\n') });
    expect(await readTextFile({ path, line: 59_999 }, [root], limits)).to.deep.equal({ content: `${lines.slice(59_998).join('\n')}\n` });
    const over = await refusal(readTextFile({ path, line: 10, limit: 5_000 }, [root], limits));
    expect(over.code).to.equal(-32602);
    expect(over.message).to.contain('the lines asked for');
  });

  it('line ranges match splitting the whole file on newlines, across chunk boundaries, multibyte characters and a missing final newline', async () => {
    let seed = 11;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const alphabet = ['a', 'é', '€', '😀'];
    const lines = Array.from({ length: 3_000 }, () => Array.from({ length: next(200) }, () => alphabet[next(alphabet.length)]).join(''));
    for (const text of [lines.join('\n'), `${lines.join('\n')}\n`, '', '\n\n']) {
      const path = join(root, 'text.txt');
      writeFileSync(path, text);
      const all = text.split('\n');
      for (const [line, limit] of [[1, 1], [2, 7], [1000, 500], [2999, 10], [3000, 1], [3001, 2], [5000, 1], [1, 0], [undefined, 3], [1500, undefined]] as const) {
        const start = Math.max(0, (line ?? 1) - 1);
        const expected = all.slice(start, limit === undefined ? all.length : start + limit).join('\n');
        expect((await readTextFile({ path, ...(line !== undefined ? { line } : {}), ...(limit !== undefined ? { limit } : {}) }, [root])).content, `line ${line} limit ${limit} of ${text.length} chars`).to.equal(expected);
      }
      expect((await readTextFile({ path }, [root])).content).to.equal(text);
    }
  });

  it('createHost({ files }) bounds what a native agent reads (an SDK-built agent run as acp:node); a bad bound is a TypeError', async function () {
    this.timeout(60_000);
    expect(() => createHost({ store: ':memory:', files: { maxReadBytes: 0 } })).to.throw(TypeError, 'maxReadBytes');
    // The agent writes 33 bytes to notes.txt and reads them back: the host answers at most 8.
    const host = createHost({ store: ':memory:', files: { maxReadBytes: 8 } });
    try {
      const session = await host.newSession({ cwd: root, agent: `acp:node ${sdkAgent}` });
      const run = session.prompt('fs');
      let said = '';
      for await (const update of run) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') said += update.content.text;
      await run.result;
      expect(said).to.contain('fs round trip failed: -32602').and.to.contain('limit of 8 bytes');
    } finally {
      await host.stop();
    }
  });
});
