// `node --require ./spec/support/require-log.cjs ...` with MODULE_LOG=<file>: every module the
// process loads through require() (CommonJS, and ES modules loaded with require(), which the
// module hooks of module-log.mjs do not see) is appended to that file as a file URL, one a line.
const Module = require('node:module');
const { appendFileSync } = require('node:fs');
const { pathToFileURL } = require('node:url');

const logFile = process.env.MODULE_LOG;
if (!logFile) throw new Error('require-log.cjs needs MODULE_LOG=<file to append module URLs to>');
const load = Module._load;
Module._load = function logged(request, parent, isMain) {
  const loaded = load.apply(this, arguments);
  try {
    const file = Module._resolveFilename(request, parent, isMain);
    if (file.startsWith('/')) appendFileSync(logFile, `${pathToFileURL(file).href}\n`);
  } catch {
    // a built-in, or resolved by a loader hook only: not a file to log
  }
  return loaded;
};
