/**
 * The stdio transport's writes (issue 28, defect 7): the lines sent in one run of the event
 * loop reach stdout as one write at its end, in the order sent (a stream of updates is a batch
 * of lines at a time; a write each was a system call each on a pipe). Over real streams: a
 * Writable that keeps each chunk it is handed, as stdout would be handed them.
 */
import { expect } from 'chai';
import { PassThrough, Writable } from 'node:stream';
import { stdioTransport, type StdioTransport } from '../../src/jsonrpc/stdio-transport.js';
import type { TransportSink } from '../../src/jsonrpc/transport.js';

const sink: TransportSink = { message: () => undefined, malformed: () => undefined, closed: () => undefined };

/** A started transport whose stdout records each write it is handed. */
function started(): { readonly transport: StdioTransport; readonly writes: string[] } {
  const writes: string[] = [];
  const output = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      writes.push(chunk.toString());
      done();
    },
  });
  const transport = stdioTransport(new PassThrough(), output);
  transport.start(sink);
  return { transport, writes };
}
const notification = (n: number) => ({ jsonrpc: '2.0' as const, method: 'session/update', params: { n } });
const line = (n: number) => `${JSON.stringify(notification(n))}\n`;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('stdioTransport writes', () => {
  it('writes the lines sent in one run of the event loop as one write, in order, once that run ends', async () => {
    const { transport, writes } = started();
    for (let n = 1; n <= 3; n++) transport.send(notification(n));
    expect(writes).to.deep.equal([]);
    await nextTurn();
    expect(writes).to.deep.equal([line(1) + line(2) + line(3)]);
    transport.send(notification(4));
    await nextTurn();
    expect(writes).to.deep.equal([line(1) + line(2) + line(3), line(4)]);
    transport.close();
  });

  it('writes what was sent before close() and nothing sent after it', async () => {
    const { transport, writes } = started();
    transport.send(notification(1));
    transport.send(notification(2));
    transport.close();
    transport.send(notification(3));
    await nextTurn();
    expect(writes.join('')).to.equal(line(1) + line(2));
  });

  it('flush() resolves once every line sent before it was handed to stdout', async () => {
    const { transport, writes } = started();
    transport.send(notification(1));
    transport.send(notification(2));
    await transport.flush();
    expect(writes.join('')).to.equal(line(1) + line(2));
    transport.close();
  });
});
