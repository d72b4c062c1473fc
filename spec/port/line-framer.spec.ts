import { expect } from 'chai';
import fc from 'fast-check';
import { LineFramer, StderrRing, buildEnvironment, isAgentSecret } from '../../src/port/index.js';

function frame(chunks: Buffer[], options: { maxLineBytes?: number; oversize?: 'kill' | 'skip' } = {}) {
  const lines: string[] = [];
  const oversized: number[] = [];
  const framer = new LineFramer({ ...options, onLine: (line) => lines.push(line), onOversize: (bytes) => oversized.push(bytes) });
  for (const chunk of chunks) framer.push(chunk);
  framer.end();
  return { lines, oversized, framer };
}

/** Cuts `bytes` at the given positions. */
function cut(bytes: Buffer, positions: number[]): Buffer[] {
  const sorted = [...new Set(positions.map((position) => position % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const position of sorted) {
    chunks.push(bytes.subarray(start, position));
    start = position;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

describe('line framer', () => {
  it('splits on LF and CRLF, skips empty lines, strips a BOM at the start only', () => {
    const input = Buffer.from('\uFEFF{"a":1}\r\n\n{"b":"\uFEFF"}\n\r\n{"c":3}');
    expect(frame([input]).lines).to.deep.equal(['{"a":1}', '{"b":"\uFEFF"}', '{"c":3}']);
  });

  it('gives the same lines however the bytes are chunked, even inside multi-byte characters and the BOM', () => {
    const line = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((text) => !/[\r\n]/u.test(text) && text.trim() === text && text.length > 0);
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), fc.boolean(), fc.boolean(), fc.array(fc.nat(), { maxLength: 12 }), (lines, bom, crlf, positions) => {
        const text = (bom ? '\uFEFF' : '') + lines.join(crlf ? '\r\n' : '\n') + '\n';
        const bytes = Buffer.from(text, 'utf8');
        expect(frame(cut(bytes, positions)).lines).to.deep.equal(lines.filter((entry) => entry.length > 0));
      }),
      { numRuns: 300 },
    );
  });

  it('kill policy: reports a line over the limit once and stops, holding at most the limit', () => {
    const big = Buffer.alloc(5000, 0x61);
    const chunks = cut(Buffer.concat([Buffer.from('{"ok":1}\n'), big, Buffer.from('\n{"after":1}\n')]), [100, 1000, 3000, 4500]);
    const { lines, oversized, framer } = frame(chunks, { maxLineBytes: 1024 });
    expect(lines).to.deep.equal(['{"ok":1}']);
    expect(oversized).to.have.length(1);
    expect(framer.stopped).to.equal(true);
  });

  it('skip policy: drops only the long line', () => {
    const big = Buffer.alloc(5000, 0x61);
    const chunks = cut(Buffer.concat([Buffer.from('{"ok":1}\n'), big, Buffer.from('\n{"after":1}\n')]), [100, 1000, 3000, 4500]);
    const { lines, oversized } = frame(chunks, { maxLineBytes: 1024, oversize: 'skip' });
    expect(lines).to.deep.equal(['{"ok":1}', '{"after":1}']);
    expect(oversized).to.have.length(1);
  });

  it('delivers an unterminated last line at the end', () => {
    expect(frame([Buffer.from('{"a":1}\n{"b"'), Buffer.from(':2}')]).lines).to.deep.equal(['{"a":1}', '{"b":2}']);
  });

  it('decodes invalid UTF-8 as replacement characters instead of failing', () => {
    expect(frame([Buffer.from([0x7b, 0xff, 0x7d, 0x0a])]).lines).to.deep.equal(['{\uFFFD}']);
  });

  it('rejects a non-positive limit with a message naming the option', () => {
    expect(() => new LineFramer({ maxLineBytes: 0, onLine: () => {} })).to.throw(TypeError, /maxLineBytes/);
  });
});

describe('stderr ring', () => {
  it('keeps only the last bytes, and the last lines on request', () => {
    const ring = new StderrRing(16);
    ring.push(Buffer.from('line one\n'));
    ring.push(Buffer.from('line two\n'));
    ring.push(Buffer.from('line three\n'));
    expect(ring.totalBytes).to.equal(29);
    expect(ring.tail()).to.equal('line three');
    ring.push(Buffer.from('x'.repeat(100)));
    expect(ring.tail()).to.equal('x'.repeat(16));
  });
});

describe('environment policy', () => {
  const parent = { PATH: '/bin', HOME: '/home/u', LC_ALL: 'C', SECRET_THING: 's', OPENAI_API_KEY: 'o', MY_SERVICE_AUTH_TOKEN: 't', CLAUDECODE: '1' };

  it('isolated keeps the baseline only, never agent secrets', () => {
    expect(buildEnvironment({ parent })).to.deep.equal({ PATH: '/bin', HOME: '/home/u', LC_ALL: 'C' });
  });

  it('inherit keeps everything but agent secrets and parent-agent markers', () => {
    expect(buildEnvironment({ policy: 'inherit', parent })).to.deep.equal({ PATH: '/bin', HOME: '/home/u', LC_ALL: 'C', SECRET_THING: 's' });
  });

  it('layers passthrough, adapter and explicit variables in that order; undefined unsets', () => {
    const env = buildEnvironment({ parent, passthrough: ['OPENAI_API_KEY'], adapter: { MODE: 'a', HOME: '/adapter' }, explicit: { MODE: 'b', LC_ALL: undefined } });
    expect(env).to.deep.equal({ PATH: '/bin', HOME: '/adapter', OPENAI_API_KEY: 'o', MODE: 'b' });
  });

  it('names secrets by list and by suffix', () => {
    expect(['ANTHROPIC_API_KEY', 'X_API_KEY', 'Y_ACCESS_TOKEN', 'PATH'].map(isAgentSecret)).to.deep.equal([true, true, true, false]);
    expect(() => buildEnvironment({ policy: 'leaky' as never })).to.throw(TypeError, /'isolated' or 'inherit'/);
  });
});
