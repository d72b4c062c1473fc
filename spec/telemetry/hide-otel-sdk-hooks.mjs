// Module hooks of hide-otel-sdk.mjs (run on Node's loader thread).
import { appendFileSync } from 'node:fs';

let logFile;
const hidden = /^@opentelemetry\/(sdk-|exporter-|resources)/;

export function initialize(data) {
  logFile = data?.logFile;
}

export async function resolve(specifier, context, nextResolve) {
  if (hidden.test(specifier)) {
    throw Object.assign(new Error(`Cannot find package '${specifier}' (hidden by hide-otel-sdk.mjs)`), { code: 'ERR_MODULE_NOT_FOUND' });
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (logFile) appendFileSync(logFile, `${url}\n`);
  return result;
}
