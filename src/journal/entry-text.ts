/**
 * The text a journal stores for an entry: `JSON.stringify(entry)`, except that an update the
 * host serialized once (src/jsonrpc/json-text.ts) is not serialized again: the editor's line,
 * written after the journal took it, splices in the same text.
 */
import { messageText } from '../jsonrpc/json-text.js';
import type { JournalEntry } from './journal.js';

/** `JSON.stringify(entry)`, byte for byte, with the update's text spliced in when the entry carries it. */
export function entryText(entry: JournalEntry): string {
  return messageText(entry, 1);
}
