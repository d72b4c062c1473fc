// `node --import ./spec/support/module-log.mjs ...` with MODULE_LOG=<file>: every ES module the
// process loads is appended to that file, one URL a line (module-log-hooks.mjs), so that a
// test can see what a command loaded without asking the command.
import { register } from 'node:module';

const logFile = process.env.MODULE_LOG;
if (!logFile) throw new Error('module-log.mjs needs MODULE_LOG=<file to append module URLs to>');
register('./module-log-hooks.mjs', import.meta.url, { data: { logFile } });
