export { connectInspector, parentSessionId, type Inspection, type InspectorConnectionOptions } from './inspector.js';
export { inspectionPayload, REDACTED, type PayloadLimits } from './inspection-payload.js';
export { createLogSink, type LogSinkOptions } from './log-sink.js';
