/**
 * The `data.reason` vocabulary (issue 15, "Tidy as you go": `RpcError` factories for it): one
 * table in src/jsonrpc/rpc-error.ts, the same table in docs/reference/errors.md, and errors made from it
 * carry the reason's code and caller-side failure.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createActor } from 'xstate';
import { connectionLogic, createMemoryTransportPair, RpcError, sendRequest } from '../../src/jsonrpc/index.js';
import { rpcReasons, type RpcReason } from '../../src/jsonrpc/rpc-error.js';

/** The rows of the docs' table: reason -> code. */
function documentedReasons(): Record<string, number> {
  const doc = readFileSync(new URL('../../docs/reference/errors.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Why a request failed: `data.reason`'));
  const table = section.slice(0, section.indexOf('\n## '));
  const rows = [...table.matchAll(/^\| `([a-z_]+)` \| `(-\d+)` \| (.+) \|$/gmu)];
  return Object.fromEntries(rows.map((row) => [row[1]!, Number(row[2])]));
}

describe('the data.reason vocabulary', () => {
  it('docs/reference/errors.md lists every reason with its code, and no other', () => {
    const declared = Object.fromEntries(Object.entries(rpcReasons).map(([reason, entry]) => [reason, entry.code]));
    expect(documentedReasons()).to.deep.equal(declared);
  });

  it('every reason is one snake_case word with a JSON-RPC code and a sentence saying when', () => {
    for (const [reason, entry] of Object.entries(rpcReasons)) {
      expect(reason).to.match(/^[a-z]+(_[a-z]+)*$/u);
      expect(entry.code).to.be.within(-32899, -32000);
      expect(entry.when.length).to.be.greaterThan(20);
    }
  });

  it('RpcError.because gives the reason its code and failure, the message as given, data.reason first', () => {
    const crashed = RpcError.because('agent_crashed', 'claude stopped during the prompt', { restarts: 1 });
    expect(crashed).to.be.instanceOf(RpcError);
    expect(crashed.toErrorObject()).to.deep.equal({ code: -32603, message: 'claude stopped during the prompt', data: { reason: 'agent_crashed', restarts: 1 } });
    expect(Object.keys(crashed.data as object)[0]).to.equal('reason');
    expect(RpcError.because('timeout', 'Request cancelled').failure).to.equal('timed_out');
    expect(RpcError.because('session_deleted', 'gone').code).to.equal(-32002);
    const overridden = RpcError.because('line_too_long', 'not read', {}, { code: -32603, failure: 'local' });
    expect([overridden.code, overridden.failure]).to.deep.equal([-32603, 'local']);
    // @ts-expect-error: a reason outside the vocabulary does not compile.
    const unknown: RpcReason = 'went_wrong';
    expect(Object.hasOwn(rpcReasons, unknown)).to.equal(false);
  });

  it('a request whose signal was aborted before sending fails -32800 with data.reason "aborted", nothing written', async () => {
    const [ours, theirs] = createMemoryTransportPair();
    const written: unknown[] = [];
    theirs.start({ message: (value) => written.push(value), malformed: () => {}, closed: () => {} });
    const connection = createActor(connectionLogic, { input: { transport: ours } }).start();
    try {
      const controller = new AbortController();
      controller.abort();
      const error = (await sendRequest(connection, 'session/prompt', {}, { signal: controller.signal }).then(
        () => undefined,
        (failed: unknown) => failed,
      )) as RpcError;
      expect(error).to.be.instanceOf(RpcError);
      expect([error.code, error.failure, error.data]).to.deep.equal([-32800, 'cancelled', { reason: 'aborted', method: 'session/prompt' }]);
      expect(written).to.deep.equal([]);
    } finally {
      connection.stop();
    }
  });
});
