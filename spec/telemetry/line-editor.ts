/**
 * An editor that speaks to a spawned `warden acp` in raw JSON lines (so that a spec controls
 * `_meta` exactly and sees every byte of stdout): requests with their answers, every line
 * kept, the agent's permission requests answered by a policy.
 */
import type { ChildProcess } from 'node:child_process';

/** The editor's side of one warden's stdio. */
export interface LineEditor {
  request(method: string, params: unknown): Promise<{ result?: unknown; error?: { code: number; message: string } }>;
  /** Every stdout line, as it came. */
  readonly lines: string[];
}

/** Connects to `child`'s stdio; `permission` answers each session/request_permission. */
export function lineEditor(child: ChildProcess, permission: (params: unknown) => unknown): LineEditor {
  const lines: string[] = [];
  const waiting = new Map<number, (answer: { result?: unknown; error?: { code: number; message: string } }) => void>();
  let pending = '';
  let nextId = 1;
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      lines.push(line);
      const message = JSON.parse(line) as { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string } };
      if (message.method === 'session/request_permission' && message.id !== undefined) {
        child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: permission(message.params) })}\n`);
      } else if (message.method === undefined && typeof message.id === 'number') {
        waiting.get(message.id)?.(message);
        waiting.delete(message.id);
      }
    }
  });
  return {
    lines,
    request(method, params) {
      const id = nextId++;
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    },
  };
}
