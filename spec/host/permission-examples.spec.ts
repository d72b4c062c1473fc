/**
 * The permission callbacks users copy (README.md, docs/embedding.md, examples/) allow once,
 * never always (issue 14, "Also"): each snippet's `permission:` function, taken from the
 * file as written and run, answers the options Claude Code and Codex really offer (their
 * adapters' `permissionOptions`, `allow_always` first) with the `allow_once` option, and
 * declines when there is none rather than taking whatever comes first.
 */
import type { RequestPermissionRequest } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { permissionOptions } from '../../src/adapters/session-outcomes.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const sources = ['README.md', 'docs/embedding.md', 'examples/embed-host.ts', 'examples/acp-conversation.ts'];

/** The expression after `permission:` (up to the `,` or `}` that closes it at depth 0), as written. */
function permissionSnippets(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/\bpermission: /gu)) {
    const start = (match.index as number) + match[0].length;
    let depth = 0;
    let end = start;
    for (; end < text.length; end++) {
      const char = text[end] as string;
      if ('({['.includes(char)) depth++;
      else if (')}]'.includes(char)) {
        if (depth === 0) break;
        depth--;
      } else if (char === ',' && depth === 0) break;
    }
    found.push(text.slice(start, end).trim());
  }
  return found.filter((snippet) => snippet.startsWith('('));
}

type Policy = (request: RequestPermissionRequest) => unknown;

const request = (options: RequestPermissionRequest['options']): RequestPermissionRequest => ({
  sessionId: 's1',
  toolCall: { toolCallId: 't1', title: 'Write /repo/new.txt', kind: 'edit', status: 'pending' },
  options,
});

describe('the permission callbacks in README.md, docs and examples', function () {
  let dir: string;
  const policies = new Map<string, Policy[]>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warden-permission-examples-'));
    for (const [index, source] of sources.entries()) {
      const snippets = permissionSnippets(readFileSync(join(repo, source), 'utf8'));
      const file = join(dir, `snippets-${index}.ts`);
      writeFileSync(file, snippets.map((snippet, at) => `export const policy${at} = ${snippet};\n`).join(''));
      const module = (await import(pathToFileURL(file).href)) as Record<string, Policy>;
      policies.set(source, snippets.map((_snippet, at) => module[`policy${at}`] as Policy));
    }
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const source of sources) {
    describe(source, () => {
      it('has a permission callback', () => expect(policies.get(source)).to.have.length.greaterThan(0));

      it('allows once what Claude Code and Codex ask (allow_always comes first)', async () => {
        for (const options of [permissionOptions('Always allow'), permissionOptions('Allow for this session')]) {
          for (const policy of policies.get(source) ?? []) {
            expect(await policy(request(options))).to.deep.equal({ outcome: 'selected', optionId: 'allow' });
          }
        }
      });

      it('declines when no option allows once, rather than taking the first', async () => {
        const options = [{ optionId: 'always', name: 'Always allow', kind: 'allow_always' as const }, { optionId: 'reject', name: 'Reject', kind: 'reject_once' as const }];
        for (const policy of policies.get(source) ?? []) expect(await policy(request(options))).to.deep.equal({ outcome: 'cancelled' });
      });
    });
  }
});
