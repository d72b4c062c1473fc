// Module hooks (run on Node's loader thread): append the URL of every module loaded to the
// file given by module-log.mjs. What spec/api/startup-modules.spec.ts reads.
import { appendFileSync } from 'node:fs';

let logFile;

export function initialize(data) {
  logFile = data.logFile;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  appendFileSync(logFile, `${url}\n`);
  return result;
}
