/**
 * The relay's floor: the work warden's relay cannot skip, done with warden's own parts and
 * nothing between them. The agent's stdout is cut into lines and each parsed (JSON.parse); a
 * `session/update`'s envelope is checked, the update serialized once (src/jsonrpc/json-text.ts)
 * and journaled through warden's SQLite journal, a group a read as the host groups them
 * (src/journal/sqlite-journal.ts: `begin` / `append` / `commit`, the session created when the
 * agent's `session/new` answer passes); after the commit its line, the journaled text and its
 * seq in a template of the one line shape it relays (the cheapest correct way to write it:
 * warden's generic splice costs about 0.4 µs more), goes to the editor. Every other line goes
 * through as it came. No port actor, no JSON-RPC connection, no agent client, host agent,
 * subscriber or agent server.
 *
 * What warden's relay costs above this is what its layers cost; what this costs above the
 * baseline (JSON.parse + JSON.stringify of each line) no relay that journals each update as a
 * row of warden's SQLite journal can avoid. A second floor journals a group as ONE row
 * (`groupRows`: a prototype layout that is NOT warden's, as in bench/journal-layout.ts: warden's
 * schema, the group's entries as one JSON array, nothing read back): what a change of the
 * journal's layout could reach. bench/relay-isolated.ts prints both beside warden's cases.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import type { Writable } from 'node:stream';
import type { JournalEntry } from '../../src/journal/journal.js';
import type { memberTextOf, withMemberText } from '../../src/jsonrpc/json-text.js';
import type { entryText } from '../../src/journal/entry-text.js';
import type { sqliteJournal } from '../../src/journal/sqlite-journal.js';

/** The warden parts the floor is made of (from src/ or a build: relay-cases.ts's WardenParts). */
export interface FloorParts {
  readonly sqliteJournal: typeof sqliteJournal;
  readonly withMemberText: typeof withMemberText;
  readonly memberTextOf: typeof memberTextOf;
  readonly entryText: typeof entryText;
}

type Update = Extract<JournalEntry, { kind: 'update' }>['update'];
interface AgentLine {
  readonly method?: string;
  readonly params?: unknown;
  readonly result?: unknown;
}

/**
 * Whether a `session/update`'s params are what the template writes: a session id and an update
 * object, nothing else (the check a relay makes of an agent's envelope; the flood agent sends
 * no other member, and the floor relays no other shape).
 */
function isUpdateParams(params: unknown): params is { readonly sessionId: string; readonly update: Update } {
  if (typeof params !== 'object' || params === null) return false;
  const { sessionId, update } = params as { sessionId?: unknown; update?: unknown };
  if (typeof sessionId !== 'string' || typeof update !== 'object' || update === null) return false;
  let members = 0;
  for (const key in params) if (Object.hasOwn(params, key)) members++;
  return members === 2;
}

/** What the floor journals through: warden's journal's group commit, or the one-row-a-group prototype. */
interface FloorJournal {
  createSession(session: { readonly sessionId: string; readonly agent: string; readonly cwd: string }): unknown;
  begin?(): void;
  append(sessionId: string, entry: JournalEntry): number;
  commit?(): void;
  close(): void;
}

/** How the floor lays out its journal: a row an update (warden's journal), or a row a group (the prototype). */
export type FloorLayout = 'rows' | 'groupRows';

/**
 * The prototype: one row per group, in a fresh file whose schema warden's own journal made (its
 * seqs start at 1 there). Each group's row has the group's last seq (the next rowid stays one
 * past it) and its entries, each as warden's journal writes it (entryText), as one JSON array;
 * the session is touched once a group, as warden's group commit does. A group is one session's
 * (the flood agent has one). Left out against warden's journal: its error naming and rollback.
 */
function groupRowJournal(parts: FloorParts, path: string): FloorJournal {
  parts.sqliteJournal(path).close();
  const db = new Database(path);
  db.pragma('synchronous = NORMAL');
  const insertSession = db.prepare("INSERT INTO sessions (session_id, agent, cwd, created_at, updated_at, state) VALUES (?, ?, ?, ?, ?, 'open')");
  const insert = db.prepare('INSERT INTO entries (seq, session_key, at, entry) VALUES (?, ?, ?, ?)');
  const touch = db.prepare('UPDATE sessions SET updated_at = ? WHERE key = ?');
  const keys = new Map<string, number>();
  let seq = 0;
  let texts: string[] = [];
  let key = 0;
  return {
    createSession(session) {
      const at = new Date().toISOString();
      keys.set(session.sessionId, Number(insertSession.run(session.sessionId, session.agent, session.cwd, at, at).lastInsertRowid));
    },
    begin() {
      texts = [];
    },
    append(sessionId, entry) {
      key = keys.get(sessionId) as number;
      texts.push(parts.entryText(entry));
      return ++seq;
    },
    commit() {
      if (texts.length === 0) return;
      const at = new Date().toISOString();
      db.exec('BEGIN IMMEDIATE');
      insert.run(seq, key, at, `[${texts.join(',')}]`);
      touch.run(at, key);
      db.exec('COMMIT');
    },
    close: () => db.close(),
  };
}

/** The floor between an agent process (`executable`, `args`) and an editor's two streams; `close` ends the agent's input and waits for its output to end. */
export function relayFloor(parts: FloorParts, layout: FloorLayout, store: string, executable: string, args: readonly string[], editorIn: NodeJS.ReadableStream, editorOut: Writable): { close(): Promise<void> } {
  const journal: FloorJournal = layout === 'rows' ? parts.sqliteJournal(store) : groupRowJournal(parts, store);
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
    let grouped = false;
    try {
      while ((newline = chunk.indexOf(10, start)) >= 0) {
        const line = chunk.toString('utf8', start, newline);
        start = newline + 1;
        const message = JSON.parse(line) as AgentLine;
        const params = message.params;
        if (message.method === 'session/update' && !isUpdateParams(params)) throw new Error(`the floor relays session/update params of a session id and an update only, got ${line.slice(0, 200)}`);
        if (message.method !== 'session/update' || !isUpdateParams(params)) {
          // The agent's answer to session/new: the session is journaled then, as the host does.
          const opened = (message.result as { sessionId?: unknown } | undefined)?.sessionId;
          if (typeof opened === 'string' && !known.has(opened)) {
            journal.createSession({ sessionId: opened, agent: 'flood', cwd: tmpdir() });
            known.add(opened);
          }
          out += `${line}\n`;
          continue;
        }
        const { sessionId, update } = params;
        // A group opens at the read's first update, as the host's journal queue opens one.
        if (!grouped) journal.begin?.();
        grouped = true;
        const entry = parts.withMemberText({ kind: 'update' as const, update }, 'update');
        const seq = journal.append(sessionId, entry);
        out += `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${JSON.stringify(sessionId)},"update":${parts.memberTextOf(entry, 'update')},"_meta":{"acp-warden/seq":${seq}}}}\n`;
      }
    } finally {
      if (grouped) journal.commit?.();
    }
    if (start < chunk.length) rest = chunk.subarray(start);
    if (out.length > 0) editorOut.write(out);
  });
  return {
    // The agent's stdout is read to its end ('close', not 'exit') before the journal closes.
    close: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          journal.close();
          resolve();
        };
        if (agent.stdout.closed) done();
        else agent.stdout.once('close', done);
        agent.stdin.end();
      }),
  };
}
