/**
 * `initialize`'s hand check (src/acp/initialize-params.ts) against the SDK's own
 * `zInitializeRequest`: for every params it takes, the same value (same keys, same order,
 * same defaults); for everything, `parserOf('InitializeRequest')` gives the SDK's verdict and
 * the SDK's error message. Generated params mix the fields editors send with wrong types,
 * unknown keys, `_meta`, nulls and out-of-range versions.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { initializeParamsOf } from '../../src/acp/initialize-params.js';
import { parserOf, schemaOf } from '../../src/acp/schemas.js';

const sdk = schemaOf('InitializeRequest');
const outcome = (run: () => unknown) => {
  try {
    return { value: JSON.stringify(run()) };
  } catch (error) {
    return { error: String((error as Error).message) };
  }
};

const anything = fc.oneof(fc.boolean(), fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null), fc.constant({}), fc.constant([]));
/** Mostly `good`, sometimes anything at all. */
const mostly = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 12, arbitrary: good }, { weight: 1, arbitrary: anything });
/** A record of optional `fields`, now and then with a field the hand check leaves to the SDK. */
const withNoise = (fields: Record<string, fc.Arbitrary<unknown>>, noise: readonly string[], requiredKeys: string[] = []) =>
  fc.tuple(fc.record(fields, { requiredKeys }), fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...noise), anything) })).map(([record, extra]) => (extra ? { ...record, [extra[0]]: extra[1] } : record));
const flag = mostly(fc.boolean());
const fs = mostly(withNoise({ readTextFile: flag, writeTextFile: flag }, ['_meta', 'other']));
const auth = mostly(withNoise({ terminal: flag }, ['_meta', 'other']));
const capabilities = mostly(withNoise({ fs, terminal: flag, auth }, ['session', 'elicitation', '_meta', 'other']));
const text = mostly(fc.string({ maxLength: 6 }));
const clientInfo = mostly(withNoise({ name: text, title: text, version: text }, ['_meta', 'other'], ['name', 'version']));
const version = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 3 }) }, { weight: 1, arbitrary: fc.oneof(fc.integer({ min: -2, max: 70_000 }), fc.double(), anything) });
const params = mostly(withNoise({ protocolVersion: version, clientCapabilities: capabilities, clientInfo }, ['_meta', 'extra'], ['protocolVersion']));

describe('initialize params: the hand check and the SDK schema', () => {
  it('takes what editors send (the recorded Zed-style initialize, with and without clientInfo) without the SDK schema, with its value', () => {
    const recorded = { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false } };
    for (const sent of [recorded, { ...recorded, clientInfo: { name: 'zed', title: 'Zed', version: '0.200.0' } }, { protocolVersion: 1 }]) {
      const checked = initializeParamsOf(sent);
      expect(checked, JSON.stringify(sent)).to.not.equal(undefined);
      expect(JSON.stringify(checked)).to.equal(JSON.stringify(sdk.parse(sent)));
    }
  });

  it('on generated params: whatever it takes has the SDK value, and the parser answers as the SDK does (value or error message)', () => {
    let taken = 0;
    fc.assert(
      fc.property(params, (sent) => {
        const checked = initializeParamsOf(sent);
        if (checked !== undefined) {
          taken += 1;
          expect(JSON.stringify(checked)).to.equal(JSON.stringify(sdk.parse(sent)));
        }
        expect(outcome(() => parserOf('InitializeRequest')(sent))).to.deep.equal(outcome(() => sdk.parse(sent ?? {})));
      }),
      // A fixed seed: the count below is of generated inputs, and must not depend on luck.
      { numRuns: 3000, seed: 20261202 },
    );
    // The property saw both sides: params the hand check took and params it left to the SDK.
    expect(taken).to.be.within(100, 2900);
  });
});
