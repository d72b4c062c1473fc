import { expect } from 'chai';
import { LineFramer, type OversizeSample } from '../../src/port/line-framer.js';
import { leadingMembers, lineKindOf, scanEnvelope } from '../../src/jsonrpc/envelope-scan.js';

/** Frames `line` under a small limit and returns the envelope read from what the framer kept. */
function envelopeOfLongLine(line: string) {
  const reports: Array<{ bytes: number; sample: OversizeSample }> = [];
  const framer = new LineFramer({ maxLineBytes: 1024, oversize: 'skip', onLine: () => {}, onOversize: (bytes, sample) => reports.push({ bytes, sample }) });
  const bytes = Buffer.from(`${line}\r\n{"after":1}\n`);
  for (let at = 0; at < bytes.length; at += 700) framer.push(bytes.subarray(at, at + 700));
  framer.end();
  expect(reports).to.have.length(1);
  expect(reports[0]?.bytes).to.equal(Buffer.byteLength(line) + 1); // the CR is part of the line's bytes
  return scanEnvelope(reports[0]!.sample.head, reports[0]!.sample.tail);
}

describe('scanEnvelope: the id of a line too long to parse', () => {
  const big = 'x'.repeat(50_000);

  it('reads a request id written before the params, not an "id" nested in them', () => {
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","params":{"id":"nested","a":[1,{"id":2}]},"id":"req-1","method":"session/prompt","more":"${big}"}`))
      .to.deep.equal({ id: 'req-1', kind: 'request', method: 'session/prompt' });
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","id":42,"method":"session/prompt","params":{"text":"${big}"}}`))
      .to.deep.equal({ id: 42, kind: 'request', method: 'session/prompt' });
  });

  it('reads an id written after the params from the end of the line', () => {
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","method":"session/prompt","params":{"text":"${big}","id":"inner"},"id":7}`))
      .to.deep.equal({ id: 7, kind: 'request', method: 'session/prompt' });
  });

  it('reads the id and method written after the params even when the id is not the last member', () => {
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","params":{"text":"${big}","id":"inner"},"id":5,"method":"m"}`))
      .to.deep.equal({ id: 5, kind: 'request', method: 'm' });
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","method":"session/prompt","params":{"a":["${big}"]} , "id" : "q\\"uote\\\\" , "more" : [1, {"id": 2}], "n": -1.5e3 }`))
      .to.deep.equal({ id: 'q"uote\\', kind: 'request', method: 'session/prompt' });
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","result":{"content":"${big}"},"id":9,"extra":true}`)).to.deep.equal({ id: 9, kind: 'response', method: undefined });
  });

  it('tells a notification over the limit (a method, no top-level id at either edge) from a line it cannot read', () => {
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","method":"session/update","params":{"text":"${big}","id":3}}`))
      .to.deep.equal({ id: null, kind: 'notification', method: 'session/update' });
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","params":{"text":"${big}"},"method":"session/cancel"}`))
      .to.deep.equal({ id: null, kind: 'notification', method: 'session/cancel' });
    // Cut inside a string, or not an object at its end: nothing tells what it was.
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","params":{"text":"${big}"}`)).to.deep.equal({ id: null, kind: 'unknown', method: undefined });
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","method":"x","params":["${big}"] trailing`)).to.deep.equal({ id: null, kind: 'unknown', method: 'x' });
  });

  it('tells answers and notifications, and gives id null when none can be read', () => {
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","id":3,"result":{"content":"${big}"}}`)).to.include({ id: 3, kind: 'response' });
    expect(scanEnvelope('{"jsonrpc":"2.0","method":"session/update"}', '')).to.deep.equal({ id: null, kind: 'notification', method: 'session/update' });
    expect(envelopeOfLongLine(`{"jsonrpc":"2.0","method":"x","params":{"text":"${big}`)).to.deep.equal({ id: null, kind: 'unknown', method: 'x' });
    expect(envelopeOfLongLine(`not json ${big}`)).to.deep.equal({ id: null, kind: 'unknown', method: undefined });
  });
});

describe('leadingMembers and lineKindOf: what the head of a skipped line tells', () => {
  it('reads the top-level scalars before the text is cut, skipping nested values; keys of cut values are known', () => {
    const head = '{"duration_api_ms":164,"usage":{"type":"nested"},"is_error":false,"subtype":"success","result":"a very long text that is cut he';
    const members = leadingMembers(head);
    expect(members.scalars).to.deep.equal({ duration_api_ms: 164, is_error: false, subtype: 'success' });
    expect([...members.keys]).to.deep.equal(['duration_api_ms', 'usage', 'is_error', 'subtype', 'result']);
    expect(members.complete).to.equal(false);
  });

  it('names a line by its top-level type or method, else by its keys (never by values)', () => {
    expect(lineKindOf('{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":[{"type":"image","source":{"data":"iVBOR')).to.equal('type user');
    expect(lineKindOf('{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"content":{"data":"iVBOR')).to.equal('method session/update');
    expect(lineKindOf('{"jsonrpc":"2.0","id":4,"result":{"_meta":{"secret":"sk-abc')).to.equal('an object with keys jsonrpc, id, result');
    expect(lineKindOf('sk-abc not json')).to.equal('a line of unknown kind');
  });
});
