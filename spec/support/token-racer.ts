/**
 * One racer for the token file test: loads, says `ready`, waits for `go` on stdin (so that
 * every racer starts creating at the same moment), then prints the token readOrCreateToken
 * gave it (or `error: …`) and exits.
 */
import { readOrCreateToken } from '../../src/serve/token-file.js';

const path = process.argv[2];
if (!path) throw new Error('usage: token-racer.ts PATH');
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  process.stdin.destroy(); // nothing more to read: let the process end once it has answered
  readOrCreateToken(path).then(
    (token) => process.stdout.write(`token ${token}\n`),
    (error: Error) => process.stdout.write(`error: ${error.message}\n`),
  );
});
