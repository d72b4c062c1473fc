/**
 * Server-sent events off an HTTP response, as the specs of the Streamable HTTP endpoint read
 * them: each event's `data:` lines joined and parsed as one JSON-RPC message, pushed in order.
 */
import type { IncomingMessage } from 'node:http';

/** Reads `response` from now on, pushing each event's JSON onto `events`. */
export function collectSseEvents<T>(response: IncomingMessage, events: T[]): void {
  let buffered = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    buffered += chunk;
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const data = buffered.slice(0, end).split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
      buffered = buffered.slice(end + 2);
      if (data) events.push(JSON.parse(data) as T);
    }
  });
}
