/**
 * What an agent server keeps of an editor that speaks ACP v2 (the connection's state; the
 * rendering that uses it is v2-edge.ts): which turn each session's updates belong to, the
 * prompts acknowledged whose turns still run, the permission requests with the editor, the
 * sessions where another connection's turn runs, the work still open (background work), the
 * subagent children shown.
 */
import type { Work } from './v2-background.js';

/** A v2 editor's connection state (see the module comment). */
export interface V2Edge {
  /** Per session, the journal seq of the prompt of the turn its updates belong to (v2-message-ids.ts). */
  readonly turnOf: Map<string, number>;
  /** Prompts acknowledged and not ended yet: the server's key → their session. */
  readonly inserted: Map<string, string>;
  /** Per session, permission requests with the editor. */
  readonly asking: Map<string, number>;
  /** Sessions where another connection's turn runs (a hub's observer saw its prompt, not yet its end). */
  readonly observing: Set<string>;
  /** Per session, the tool calls and terminals not ended (v2-background.ts). */
  readonly work: Work;
  /** Per session, the subagent children its updates announced to this editor (`subagent_update`): a replay marks each complete too. */
  readonly children: Map<string, Set<string>>;
  /** A request other than `initialize` came: `initialize` may no longer be repeated (the SDK router's rule). */
  requested: boolean;
}

/** A new v2 connection's state. */
export function v2Edge(): V2Edge {
  return { turnOf: new Map(), inserted: new Map(), asking: new Map(), observing: new Set(), work: new Map(), children: new Map(), requested: false };
}
