/**
 * `warden sessions [--connect URL] [--token-file PATH] [--json] [--close ID]`: the sessions of a
 * running `warden serve` (agent, state, attached clients with their role, last activity), or
 * closes one (its agent stops, the journal keeps it).
 */
import { defaultListen } from '../serve/listen-address.js';
import { callDaemon, DaemonCallError, daemonUrl } from '../serve/daemon-call.js';
import { defaultTokenPath, readToken } from '../serve/token-file.js';
import type { HubSessionInfo } from '../serve/connection-hub.js';
import { ArgumentError } from './arguments.js';
import { helpRow, optionRows, parseFlags, type FlagTable } from './flag-table.js';

/** The flags of `warden sessions` as its table fills them. */
interface SessionsFlagValues {
  connect: string;
  tokenFile: string;
  json: boolean;
  close: string | undefined;
}

/** The flags of `warden sessions`. */
export const sessionsFlags: FlagTable<SessionsFlagValues> = {
  '--connect': { field: 'connect', value: 'URL', default: `ws://${defaultListen}/acp`, help: `the daemon: ws://HOST:PORT/acp or unix:PATH (default ws://${defaultListen}/acp)` },
  '--token-file': { field: 'tokenFile', value: 'PATH', default: defaultTokenPath, help: `the daemon's token (default ${defaultTokenPath()})` },
  '--json': { field: 'json', help: 'print {"sessions": [...]} as JSON' },
  '--close': { field: 'close', value: 'ID', help: 'close session ID on the daemon (its agent stops; the journal keeps it)' },
};

/** `warden sessions --help`. */
export const sessionsUsage = `Usage: warden sessions [--connect URL] [--token-file PATH] [--json] [--close ID]

The sessions of a running warden serve: agent, state, attached clients (controller or
observer, and the last seq each was sent), last activity. Sessions only in the journal show
as "stored" (the first attach restores them).

Options:
${optionRows(sessionsFlags, 21, { extra: [helpRow()] })}`;

/** Runs `warden sessions`; resolves with the exit status. */
export async function runSessions(args: readonly string[], write: (text: string) => void): Promise<number> {
  let parsed: SessionsFlagValues | 'help';
  try {
    parsed = parseFlags(sessionsFlags, args, 'See warden sessions --help.');
  } catch (error) {
    if (!(error instanceof ArgumentError)) throw error;
    process.stderr.write(`warden sessions: ${error.message}\n`);
    return 2;
  }
  if (parsed === 'help') {
    process.stderr.write(`${sessionsUsage}\n`);
    return 0;
  }
  const { connect, tokenFile, json, close } = parsed;
  let token: string | undefined;
  try {
    token = await readToken(tokenFile);
  } catch (error) {
    process.stderr.write(`warden sessions: ${(error as Error).message}\n`);
    return 2;
  }
  if (token === undefined) {
    process.stderr.write(`warden sessions: no token file at ${tokenFile}: warden serve creates it when it starts (or give --token-file the file the daemon uses)\n`);
    return 2;
  }
  try {
    const url = daemonUrl(connect);
    if (close !== undefined) {
      await callDaemon(url, token, '_acp-warden/close_session', { sessionId: close });
      write(json ? `${JSON.stringify({ closed: close })}\n` : `closed ${close}\n`);
      return 0;
    }
    const { sessions } = (await callDaemon(url, token, '_acp-warden/sessions', {})) as { sessions: HubSessionInfo[] };
    write(json ? `${JSON.stringify({ sessions })}\n` : formatSessions(sessions));
    return 0;
  } catch (error) {
    if (!(error instanceof DaemonCallError)) throw error;
    process.stderr.write(`warden sessions: ${error.message}\n`);
    return error.status;
  }
}

/** The sessions as a table, one line each (`-` where nothing is known). */
export function formatSessions(sessions: readonly HubSessionInfo[]): string {
  if (sessions.length === 0) return 'no sessions\n';
  // A store shared by hosts (PostgreSQL) says who owns each session: two more columns then.
  const shared = sessions.some((session) => session.owner !== undefined);
  const rows = [['SESSION', 'AGENT', 'STATE', ...(shared ? ['OWNER', 'EPOCH'] : []), 'CLIENTS', 'LAST ACTIVITY']];
  for (const session of sessions) {
    const clients = session.clients.length === 0 ? '-' : session.clients.map((client) => `${client.peer ?? client.connectionId} (${client.role}${client.delivered === undefined ? '' : `, seq ${client.delivered}`})`).join(', ');
    const owner = shared ? [session.owner?.hostId ?? '-', session.owner === undefined ? '-' : String(session.owner.epoch)] : [];
    rows.push([session.sessionId, session.agent ?? '-', session.state, ...owner, clients, session.lastActivity ?? '-']);
  }
  const widths = (rows[0] as string[]).map((_, column) => Math.max(...rows.map((row) => (row[column] as string).length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] as number))).join('  ')).join('\n') + '\n';
}
