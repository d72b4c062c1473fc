/**
 * ACP method names come from the SDK's method tables, never typed by hand (issue 15, "Tidy as
 * you go"; STYLE.md rule 5): a renamed method then fails at compile time. Read from the source
 * text of the files that call or serve ACP methods: no quoted string is an ACP method name
 * (those with a slash: `initialize` is also a word of the Claude and Codex protocols). Nor is a
 * `data.reason` of the vocabulary typed as `reason: '…'`: `RpcError.because` makes those errors,
 * with the reason's code and caller-side failure from `rpcReasons`.
 */
import { AGENT_METHODS, CLIENT_METHODS, PROTOCOL_METHODS } from '@agentclientprotocol/sdk';
import { AGENT_METHODS as UNSTABLE_AGENT_METHODS, CLIENT_METHODS as UNSTABLE_CLIENT_METHODS } from '@agentclientprotocol/sdk/unstable';
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { rpcReasons } from '../../src/jsonrpc/rpc-error.js';

/** The .ts files of a folder of src/ (new files there are checked too). */
const filesIn = (dir: string) =>
  readdirSync(new URL(`../../src/${dir}/`, import.meta.url))
    .filter((name) => name.endsWith('.ts'))
    .sort()
    .map((name) => `${dir}/${name}`);

const files = [
  'acp/agent-client.ts',
  'acp/agent-server.ts',
  'protocol/native-agent.ts',
  'adapters/adapter-agent.ts',
  'adapters/claude/adapter.ts',
  'adapters/codex/adapter.ts',
  ...filesIn('adapters/passthrough'),
  'host/host-agent.ts',
  ...filesIn('host/agent'),
  ...filesIn('session'),
];
const acpMethods = new Set<string>(
  [AGENT_METHODS, CLIENT_METHODS, PROTOCOL_METHODS, UNSTABLE_AGENT_METHODS, UNSTABLE_CLIENT_METHODS].flatMap((table) => Object.values(table)).filter((method) => method.includes('/')),
);

/** Quoted strings (', ", `) of a source text, comments left out, that are ACP method names. */
function methodLiteralsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//gu, '').replace(/(^|[^:'"`])\/\/.*$/gmu, '$1');
  return [...code.matchAll(/(['"`])([^'"`\n]*)\1/gu)].map((match) => match[2]!).filter((literal) => acpMethods.has(literal));
}

/** `reason: '…'` members of a source text, comments left out, naming a reason of the data.reason vocabulary. */
function reasonLiteralsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//gu, '').replace(/(^|[^:'"`])\/\/.*$/gmu, '$1');
  return [...code.matchAll(/\breason:\s*(['"`])([^'"`\n]*)\1/gu)].map((match) => match[2]!).filter((reason) => Object.hasOwn(rpcReasons, reason));
}

describe('ACP method names from the SDK tables', () => {
  it('finds a method name typed by hand (checked on known text)', () => {
    expect(methodLiteralsOf("send('session/prompt', x); // 'session/new'\nconst y = AGENT_METHODS.session_load; codex('initialize');")).to.deep.equal(['session/prompt']);
  });

  it('finds a data.reason typed by hand (checked on known text)', () => {
    expect(reasonLiteralsOf("RpcError.internalError('x', { sessionId, reason: 'session_failed' }); // reason: 'shutdown'\nskipped.push({ reason: 'it is gone' }); RpcError.because('shutdown', 'y');")).to.deep.equal(['session_failed']);
  });

  it('checks the files of the folders it names (none is empty)', () => {
    for (const dir of ['adapters/passthrough', 'host/agent', 'session']) expect(files.filter((file) => file.startsWith(`${dir}/`))).to.have.length.greaterThan(1);
  });

  for (const file of files) {
    const text = () => readFileSync(new URL(`../../src/${file}`, import.meta.url), 'utf8');
    it(`src/${file} types no ACP method name by hand`, () => {
      expect(methodLiteralsOf(text())).to.deep.equal([]);
    });
    it(`src/${file} makes data.reason errors with RpcError.because, no reason typed by hand`, () => {
      expect(reasonLiteralsOf(text())).to.deep.equal([]);
    });
  }
});
