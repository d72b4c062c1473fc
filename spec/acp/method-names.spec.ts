/**
 * ACP method names come from the SDK's method tables, never typed by hand (issue 15, "Tidy as
 * you go"; STYLE.md rule 5): a renamed method then fails at compile time. Read from the source
 * text of the files that call or serve ACP methods: no quoted string is an ACP method name
 * (those with a slash: `initialize` is also a word of the Claude and Codex protocols).
 */
import { AGENT_METHODS, CLIENT_METHODS, PROTOCOL_METHODS } from '@agentclientprotocol/sdk';
import { AGENT_METHODS as UNSTABLE_AGENT_METHODS, CLIENT_METHODS as UNSTABLE_CLIENT_METHODS } from '@agentclientprotocol/sdk/unstable';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';

const files = ['acp/agent-client.ts', 'acp/native-agent.ts', 'adapters/adapter-agent.ts', 'adapters/claude/adapter.ts', 'adapters/codex/adapter.ts'];
const acpMethods = new Set<string>(
  [AGENT_METHODS, CLIENT_METHODS, PROTOCOL_METHODS, UNSTABLE_AGENT_METHODS, UNSTABLE_CLIENT_METHODS].flatMap((table) => Object.values(table)).filter((method) => method.includes('/')),
);

/** Quoted strings (', ", `) of a source text, comments left out, that are ACP method names. */
function methodLiteralsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//gu, '').replace(/(^|[^:'"`])\/\/.*$/gmu, '$1');
  return [...code.matchAll(/(['"`])([^'"`\n]*)\1/gu)].map((match) => match[2]!).filter((literal) => acpMethods.has(literal));
}

describe('ACP method names from the SDK tables', () => {
  it('finds a method name typed by hand (checked on known text)', () => {
    expect(methodLiteralsOf("send('session/prompt', x); // 'session/new'\nconst y = AGENT_METHODS.session_load; codex('initialize');")).to.deep.equal(['session/prompt']);
  });

  for (const file of files) {
    it(`src/${file} types no ACP method name by hand`, () => {
      const text = readFileSync(new URL(`../../src/${file}`, import.meta.url), 'utf8');
      expect(methodLiteralsOf(text)).to.deep.equal([]);
    });
  }
});
