// `node --import ./spec/telemetry/hide-otel-sdk.mjs ...`: the OpenTelemetry SDK and exporters
// cannot be found (ERR_MODULE_NOT_FOUND), as where they are not installed; the API still is.
// With HIDE_OTEL_LOG=<file>, every module URL loaded is appended to that file (what a spec
// reads to see that nothing of OpenTelemetry was loaded).
import { register } from 'node:module';

register('./hide-otel-sdk-hooks.mjs', import.meta.url, { data: { logFile: process.env.HIDE_OTEL_LOG } });
