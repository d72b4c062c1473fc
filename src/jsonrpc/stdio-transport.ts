import { jsonLines, LineFramer } from '../port/line-framer.js';
import { WriteQueue } from '../port/write-queue.js';
import type { JsonRpcMessage } from './message.js';
import type { Transport, TransportSink } from './transport.js';

/**
 * A transport over this process's own stdin and stdout: what `warden acp` speaks to the
 * editor. stdout is the protocol channel: this is the only writer, one message per line.
 */
export function stdioTransport(
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
  options: { maxLineBytes?: number } = {},
): Transport {
  let sink: TransportSink | undefined;
  let closed = false;
  const writes = new WriteQueue(output as unknown as import('node:stream').Writable);
  const finish = (message: string) => {
    if (closed) return;
    closed = true;
    sink?.closed({ message });
  };
  const framer = new LineFramer({
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    oversize: 'skip',
    onLine: jsonLines((value) => sink?.message(value), (preview) => sink?.malformed(preview)),
    onOversize: (bytes) => sink?.malformed(`<a line of ${bytes} bytes, over the limit>`),
  });
  const onData = (chunk: Buffer | string) => framer.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const onEnd = () => {
    framer.end();
    finish('the client closed our stdin');
  };
  const onError = (error: Error) => finish(`stdio failed: ${error.message}`);
  return {
    start(target) {
      sink = target;
      input.on('data', onData);
      input.on('end', onEnd);
      input.on('error', onError);
      output.on('error', onError);
    },
    send(message: JsonRpcMessage) {
      if (closed) return;
      writes.write(`${JSON.stringify(message)}\n`, (error) => {
        if (error) finish(`stdout failed: ${error.message}`);
      }); // stdout-ok: the protocol writer
    },
    close() {
      closed = true;
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onError);
    },
  };
}
