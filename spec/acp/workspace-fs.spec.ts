import { expect } from 'chai';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
