/**
 * The SDK 2.4.0's ACP v2 client as the editor of a `warden acp` process over its stdio, as the
 * v2 specs drive it: every `session/update` recorded as it came, `initialize` for version 2
 * sent and checked to open v2.
 */
import { client, ndJsonStream } from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';

/** The v2 client `name` on `child`'s stdio, initialized for v2: its agent side and the updates it got (as `T`). */
export async function v2StdioEditor<T>(child: ChildProcess, name: string) {
  const updates: T[] = [];
  const app = client({ name }).onNotification('session/update', ({ params }) => {
    updates.push(params as unknown as T);
  });
  const { agent } = app.connect(ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>));
  const answer = await agent.request('initialize', { protocolVersion: 2, info: { name, version: '1' }, capabilities: {} });
  expect(answer.protocolVersion).to.equal(2);
  return { agent, updates };
}
