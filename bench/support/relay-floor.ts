/**
 * The relay's floor: the work warden's relay cannot skip, done with warden's own parts and
 * nothing between them. The agent's stdout is cut into lines and each parsed by warden's framer
 * (src/port/line-framer.ts: `LineFramer`, `jsonLines`); a `session/update`'s envelope is
 * checked as warden checks a hot update (src/acp/hot-update-check.ts), the update serialized
 * once (src/jsonrpc/json-text.ts)
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
import type { jsonLines, LineFramer } from '../../src/port/line-framer.js';
import type { isHotSessionUpdate } from '../../src/acp/hot-update-check.js';

/** The warden parts the floor is made of (from src/ or a build: relay-cases.ts's WardenParts). */
export interface FloorParts {
  readonly sqliteJournal: typeof sqliteJournal;
  readonly withMemberText: typeof withMemberText;
  readonly memberTextOf: typeof memberTextOf;
  readonly entryText: typeof entryText;
  readonly LineFramer: typeof LineFramer;
  readonly jsonLines: typeof jsonLines;
  readonly isHotSessionUpdate: typeof isHotSessionUpdate;
}

type Update = Extract<JournalEntry, { kind: 'update' }>['update'];
interface AgentMessage {
  readonly method?: string;
  readonly params?: unknown;
  readonly result?: unknown;
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
  editorIn.pipe(agent.stdin);

  // One read's lines go out together, after the read's group (if any) is committed.
  let out = '';
  let grouped = false;
  const onMessage = (value: unknown) => {
    const message = value as AgentMessage;
    if (message.method !== 'session/update') {
      // The agent's answer to session/new: the session is journaled then, as the host does.
      const opened = (message.result as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof opened === 'string' && !known.has(opened)) {
        journal.createSession({ sessionId: opened, agent: 'flood', cwd: tmpdir() });
        known.add(opened);
      }
      out += `${JSON.stringify(message)}\n`;
      return;
    }
    // The template writes a session id and an update only: the flood agent sends nothing else.
    if (!parts.isHotSessionUpdate(message.params) || Object.hasOwn(message.params as object, '_meta')) throw new Error(`the floor relays hot session/update params of a session id and an update only, got ${JSON.stringify(message).slice(0, 200)}`);
    const { sessionId, update } = message.params as { sessionId: string; update: Update };
    // A group opens at the read's first update, as the host's journal queue opens one.
    if (!grouped) journal.begin?.();
    grouped = true;
    const entry = parts.withMemberText({ kind: 'update' as const, update }, 'update');
    const seq = journal.append(sessionId, entry);
    out += `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${JSON.stringify(sessionId)},"update":${parts.memberTextOf(entry, 'update')},"_meta":{"acp-warden/seq":${seq}}}}\n`;
  };
  const framer = new parts.LineFramer({
    oversize: 'kill',
    onLine: parts.jsonLines(onMessage, (preview) => {
      throw new Error(`the agent wrote a line that is not JSON: ${preview}`);
    }),
    onOversize: (bytes) => {
      throw new Error(`the agent wrote a line of ${bytes} bytes, over the limit`);
    },
  });
  agent.stdout.on('data', (data: Buffer) => {
    try {
      framer.push(data);
    } finally {
      if (grouped) journal.commit?.();
      grouped = false;
    }
    if (out.length > 0) editorOut.write(out);
    out = '';
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
