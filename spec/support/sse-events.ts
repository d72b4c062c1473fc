/**
 * Server-sent events off an HTTP response, as the specs of the Streamable HTTP endpoint read
 * them: each event's `data:` lines joined and parsed as one JSON-RPC message, pushed in order.
 */
import type { IncomingMessage } from 'node:http';

/** Reads `response` from now on, pushing each event's JSON onto `events`. */
export function collectSseEvents<T>(response: IncomingMessage, events: T[]): void {
  onSseEvents<T>(response, (event) => events.push(event));
}

/** Reads `response` from now on, handing each event's JSON to `listener`, in order. */
export function onSseEvents<T>(response: IncomingMessage, listener: (event: T) => void): void {
  let buffered = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    buffered += chunk;
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const data = sseData(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
      if (data) listener(JSON.parse(data) as T);
    }
  });
}

/** The `data:` lines of one SSE event (its text up to the blank line), joined. */
export function sseData(event: string): string {
  return event.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
}
