/** A long journaled session, written straight into a SQLite store through the journal API (fast: groups of 1,000). */
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';

/** Writes a session of `updates` agent message chunks of about `size` bytes each (agent 'demo', or `on.agent` with `on.resume`; id `long-N` unless `on.sessionId`); returns its id. */
export function writeLongSession(path: string, cwd: string, updates: number, size: number, on: { readonly agent: string; readonly resume?: unknown; readonly sessionId?: string } = { agent: 'demo' }): string {
  const journal = sqliteJournal(path);
  const sessionId = on.sessionId ?? `long-${updates}`;
  try {
    journal.createSession({ sessionId, agent: on.agent, cwd });
    if (on.resume !== undefined) journal.setResume(sessionId, on.resume);
    const filler = 'y'.repeat(Math.max(0, size - 16));
    for (let start = 0; start < updates; start += 1000) {
      journal.begin?.();
      for (let index = start; index < Math.min(updates, start + 1000); index++) {
        journal.append(sessionId, { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `#${index} ${filler}` } } });
      }
      journal.commit?.();
    }
  } finally {
    journal.close();
  }
  return sessionId;
}

/** Writes a session of `prompts` prompts, each a line of text and a screenshot of `imageBytes` (base64); returns its id. */
export function writeScreenshotSession(path: string, cwd: string, prompts: number, imageBytes: number): string {
  const journal = sqliteJournal(path);
  const sessionId = `shots-${prompts}`;
  try {
    journal.createSession({ sessionId, agent: 'demo', cwd });
    for (let index = 0; index < prompts; index++) {
      const data = String(index % 10).repeat(imageBytes);
      journal.append(sessionId, { kind: 'prompt', prompt: [{ type: 'text', text: `shot ${index}` }, { type: 'image', mimeType: 'image/png', data }] });
    }
  } finally {
    journal.close();
  }
  return sessionId;
}
