/**
 * The relay's floor: the work warden's relay cannot skip, done with warden's own parts and
 * nothing between them. The agent's stdout is cut into lines and each parsed (JSON.parse);
 * each `session/update` is serialized once (src/jsonrpc/json-text.ts) and journaled through
 * warden's SQLite journal, a group a read as the host groups them (src/journal/sqlite-journal.ts:
 * `begin` / `append` / `commit`); after the commit its line, the journaled text and its seq in
 * a template of the one line shape it relays (the cheapest correct way to write it: warden's
 * generic splice costs about 0.4 µs more), goes to the editor. Every other line goes through
 * as it came. No port actor, no JSON-RPC connection, no agent client, host agent, subscriber
 * or agent server.
 *
 * What warden's relay costs above this is what its layers cost; what this costs above the
 * baseline (JSON.parse + JSON.stringify of each line) no relay that journals each update can
 * avoid. bench/relay.ts and bench/relay-isolated.ts print it beside warden's cases.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import type { Writable } from 'node:stream';
import type { Journal, JournalEntry } from '../../src/journal/journal.js';
import type { memberTextOf, withMemberText } from '../../src/jsonrpc/json-text.js';
import type { sqliteJournal } from '../../src/journal/sqlite-journal.js';

/** The warden parts the floor is made of (from src/ or a build: relay-cases.ts's WardenParts). */
export interface FloorParts {
  readonly sqliteJournal: typeof sqliteJournal;
  readonly withMemberText: typeof withMemberText;
  readonly memberTextOf: typeof memberTextOf;
}

type Update = Extract<JournalEntry, { kind: 'update' }>['update'];
interface AgentLine {
  readonly method?: string;
  readonly params?: { readonly sessionId: string; readonly update: Update };
}

/** The floor between an agent process (`executable`, `args`) and an editor's two streams; `close` ends both. */
export function relayFloor(parts: FloorParts, store: string, executable: string, args: readonly string[], editorIn: NodeJS.ReadableStream, editorOut: Writable): { close(): Promise<void> } {
  const journal: Journal = parts.sqliteJournal(store);
  const agent = spawn(executable, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const known = new Set<string>();

  // Editor -> agent: lines as they come (the flood agent answers by id).
  editorIn.on('data', (chunk: Buffer | string) => agent.stdin.write(chunk));

  let rest: Buffer | undefined;
  agent.stdout.on('data', (data: Buffer) => {
    const chunk = rest === undefined ? data : Buffer.concat([rest, data]);
    rest = undefined;
    let out = '';
    let start = 0;
    let newline: number;
    journal.begin?.();
    try {
      while ((newline = chunk.indexOf(10, start)) >= 0) {
        const line = chunk.toString('utf8', start, newline);
        start = newline + 1;
        const message = JSON.parse(line) as AgentLine;
        if (message.method !== 'session/update' || message.params === undefined) {
          out += `${line}\n`;
          continue;
        }
        const { sessionId, update } = message.params;
        if (!known.has(sessionId)) {
          journal.createSession({ sessionId, agent: 'flood', cwd: tmpdir() });
          known.add(sessionId);
        }
        const entry = parts.withMemberText({ kind: 'update' as const, update }, 'update');
        const seq = journal.append(sessionId, entry);
        out += `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${JSON.stringify(sessionId)},"update":${parts.memberTextOf(entry, 'update')},"_meta":{"acp-warden/seq":${seq}}}}\n`;
      }
    } finally {
      journal.commit?.();
    }
    if (start < chunk.length) rest = chunk.subarray(start);
    if (out.length > 0) editorOut.write(out);
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        agent.once('exit', () => {
          journal.close();
          resolve();
        });
        agent.stdin.end();
      }),
  };
}
