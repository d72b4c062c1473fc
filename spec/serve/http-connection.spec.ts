/**
 * One Streamable HTTP connection as a transport (src/serve/http-connection.ts), in memory: its
 * event streams are fake `ServerResponse`s whose sockets take only what the test lets them.
 * Where each message goes (a session's stream while it is open, else the connection's; waiting
 * messages moving with it), the initialize answer, held POSTs, water marks (one big message,
 * then its drain), and the two ways to end.
 */
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { HttpConnection } from '../../src/serve/http-connection.js';
import type { JsonRpcMessage } from '../../src/jsonrpc/message.js';
import type { PeerLost, TransportSink } from '../../src/jsonrpc/transport.js';

/** A response whose socket holds `capacity` bytes unsent before `write` says to wait; `read()` is the client reading all. */
class FakeResponse extends EventEmitter {
  readonly written: string[] = [];
  writableLength = 0;
  ended = false;
  readonly socket = { setNoDelay: () => undefined };

  constructor(private readonly capacity = Number.MAX_SAFE_INTEGER) {
    super();
  }

  get writableNeedDrain(): boolean {
    return this.writableLength >= this.capacity;
  }

  writeHead(): this {
    return this;
  }

  flushHeaders(): void {}

  write(text: string): boolean {
    this.written.push(text);
    this.writableLength += Buffer.byteLength(text);
    return !this.writableNeedDrain;
  }

  end(): void {
    this.ended = true;
  }

  /** The client read everything written: the socket drains. */
  read(): void {
    this.writableLength = 0;
    this.emit('drain');
  }

  /** The client closed its GET. */
  gone(): void {
    this.emit('close');
  }

  /** The messages written as SSE events, parsed. */
  messages(): Array<Record<string, any>> {
    return this.written.filter((text) => text.startsWith('data: ')).map((text) => JSON.parse(text.slice(6)) as Record<string, any>);
  }
}

interface RecordingSink extends TransportSink {
  readonly received: unknown[];
  readonly lost: PeerLost[];
  readonly pressure: boolean[];
}

function recordingSink(): RecordingSink {
  const received: unknown[] = [];
  const lost: PeerLost[] = [];
  const pressure: boolean[] = [];
  return {
    received,
    lost,
    pressure,
    message: (value) => received.push(value),
    malformed: () => undefined,
    closed: (reason) => lost.push(reason),
    backpressure: (backedUp) => pressure.push(backedUp),
  };
}

const update = (sessionId: string, n: number): JsonRpcMessage => ({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `#${n}` } } } });
const texts = (response: FakeResponse) => response.messages().map((message) => message.params?.update?.content?.text ?? `answer ${String(message.id)}`);
const asResponse = (fake: FakeResponse) => fake as unknown as ServerResponse;

describe('HttpConnection (the Streamable HTTP transport of warden serve)', () => {
  let connection: HttpConnection;
  let sink: RecordingSink;
  let ended: string[];

  beforeEach(() => {
    ended = [];
    connection = new HttpConnection({ connectionId: 'c1', pingIntervalMs: 0, ended: (id) => ended.push(id) });
    sink = recordingSink();
    connection.start(sink);
  });

  afterEach(() => connection.close());

  describe('where messages go', () => {
    it("a session's messages go on the connection stream until its own stream is open, then on it; the answer to a request naming no session stays on the connection's", async () => {
      const main = new FakeResponse();
      expect(connection.openStream(undefined, asResponse(main))).to.equal('open');
      await connection.post({ jsonrpc: '2.0', id: 2, method: 'session/new', params: {} }, undefined);
      connection.send({ jsonrpc: '2.0', id: 2, result: { sessionId: 's' } });
      connection.send(update('s', 0));
      const own = new FakeResponse();
      expect(connection.openStream('s', asResponse(own))).to.equal('open');
      connection.send(update('s', 1));
      expect(texts(main)).to.deep.equal(['answer 2', '#0']);
      expect(texts(own)).to.deep.equal(['#1']);
    });

    it('the answer to a request naming a session goes on that session stream, after its updates', async () => {
      connection.openStream(undefined, asResponse(new FakeResponse()));
      const own = new FakeResponse();
      connection.openStream('s', asResponse(own));
      await connection.post({ jsonrpc: '2.0', id: 'p', method: 'session/prompt', params: { sessionId: 's', prompt: [] } }, 's');
      connection.send(update('s', 0));
      connection.send({ jsonrpc: '2.0', id: 'p', result: { stopReason: 'end_turn' } });
      expect(texts(own)).to.deep.equal(['#0', 'answer p']);
    });

    it("opening a session's stream takes that session's messages still waiting on the connection stream, in order, ahead of the next ones; closing it gives the waiting ones back", () => {
      const main = new FakeResponse(1); // takes one message, then waits
      connection.openStream(undefined, asResponse(main));
      connection.send(update('s', 0)); // written
      connection.send(update('s', 1)); // waiting
      connection.send(update('t', 0)); // waiting, another session
      connection.send(update('s', 2)); // waiting
      const own = new FakeResponse(1);
      connection.openStream('s', asResponse(own));
      connection.send(update('s', 3));
      expect(texts(own), 's moved to its stream: one written, the rest waiting').to.deep.equal(['#1']);
      own.gone();
      for (let reads = 0; reads < 3; reads++) main.read(); // it takes one message per read
      expect(texts(main), "t's stays; s's waiting ones come back after it, in order").to.deep.equal(['#0', '#0', '#2', '#3']);
    });

    it('a second receiver of one stream is refused (conflict); a GET after the end is closed', () => {
      connection.openStream(undefined, asResponse(new FakeResponse()));
      expect(connection.openStream(undefined, asResponse(new FakeResponse()))).to.equal('conflict');
      connection.openStream('s', asResponse(new FakeResponse()));
      expect(connection.openStream('s', asResponse(new FakeResponse()))).to.equal('conflict');
      connection.close();
      expect(connection.openStream('t', asResponse(new FakeResponse()))).to.equal('closed');
    });
  });

  describe('input', () => {
    it("initialize resolves with its answer, which goes on no stream", async () => {
      const main = new FakeResponse();
      connection.openStream(undefined, asResponse(main));
      const answered = connection.initialize({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, 1);
      expect(sink.received).to.have.length(1);
      connection.send({ jsonrpc: '2.0', id: 1, result: { protocolVersion: 1 } });
      expect(await answered).to.deep.equal({ jsonrpc: '2.0', id: 1, result: { protocolVersion: 1 } });
      expect(main.messages()).to.deep.equal([]);
    });

    it('while the connection holds its reading, POSTs wait (undelivered, unanswered) and are delivered in order when it lets go', async () => {
      connection.holdReading(true);
      let settled = 0;
      const first = connection.post({ jsonrpc: '2.0', id: 1, method: 'a' }, undefined).then((ok) => (settled++, ok));
      const second = connection.post({ jsonrpc: '2.0', id: 2, method: 'b' }, undefined).then((ok) => (settled++, ok));
      await Promise.resolve();
      expect(sink.received).to.deep.equal([]);
      expect(settled).to.equal(0);
      connection.holdReading(false);
      expect(await Promise.all([first, second])).to.deep.equal([true, true]);
      expect(sink.received.map((value) => (value as { id: number }).id)).to.deep.equal([1, 2]);
    });
  });

  describe('flow control', () => {
    it('one message over the high-water mark backs the connection up at once; the drain of its socket lets go, with nothing queued behind it', () => {
      const main = new FakeResponse(1);
      connection.openStream(undefined, asResponse(main));
      connection.send({ jsonrpc: '2.0', method: 'big', params: { pad: 'x'.repeat(300 * 1024) } });
      expect(sink.pressure).to.deep.equal([true]);
      main.read();
      expect(sink.pressure).to.deep.equal([true, false]);
    });

    it('messages waiting for a receiver count: backed up past 256 KiB; a GET that reads them lets go', () => {
      for (let n = 0; n < 300; n++) connection.send({ jsonrpc: '2.0', method: 'note', params: { n, pad: 'x'.repeat(1024) } });
      expect(sink.pressure).to.deep.equal([true]);
      const main = new FakeResponse();
      connection.openStream(undefined, asResponse(main));
      expect(main.messages()).to.have.length(300);
      main.read();
      expect(sink.pressure).to.deep.equal([true, false]);
    });
  });

  describe('ending', () => {
    it('the client gone (DELETE, or its connection stream closed): the sink hears why, the endpoint forgets it, a later POST is refused', async () => {
      const main = new FakeResponse();
      connection.openStream(undefined, asResponse(main));
      main.gone();
      expect(sink.lost.map((reason) => reason.message)).to.deep.equal(["the HTTP client's connection event stream (GET) closed: the client is gone"]);
      expect(ended).to.deep.equal(['c1']);
      expect(await connection.post({ jsonrpc: '2.0', id: 3, method: 'x' }, undefined)).to.equal(false);
    });

    it('close() by the daemon: what waits is written, every stream ends, the sink hears nothing (it asked)', () => {
      const main = new FakeResponse(1);
      connection.openStream(undefined, asResponse(main));
      connection.send(update('s', 0));
      connection.send(update('s', 1));
      connection.close();
      expect(texts(main)).to.deep.equal(['#0', '#1']);
      expect(main.ended).to.equal(true);
      expect(sink.lost).to.deep.equal([]);
      expect(ended).to.deep.equal(['c1']);
    });
  });
});
