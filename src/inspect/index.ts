export { connectInspector, parentSessionId, statelyEventOf, type Inspection, type InspectorConnectionOptions } from './inspector.js';
export { inspectionPayload, REDACTED, type PayloadLimits } from './inspection-payload.js';
export { createLogSink, LogFileError, logFileWriter, type LogFileWrite, type LogFileWriterOptions, type LogSinkOptions } from './log-sink.js';
export {
  createLiveViewModel,
  type LiveActorKind,
  type LiveActorStatus,
  type LiveActorView,
  type LiveChartView,
  type LiveMachineView,
  type LivePendingView,
  type LiveSourceView,
  type LiveTimelineEntry,
  type LiveTransition,
  type LiveViewModel,
  type LiveViewModelOptions,
  type LiveViewState,
} from './live-view-model.js';
export { serveLiveView, type LiveViewServer, type LiveViewServerOptions } from './live-view-server.js';
export { createLiveViewTap, type LiveViewServeOptions, type LiveViewTap, type LiveViewTapOptions } from './live-view.js';
export { CHART_FORMAT, chartOfMachine, chartStates, chartEdges, parseChart, ChartFormatError, type Chart, type ChartNode, type ChartTransition, type ChartAbout } from './chart-model.js';
export { toMermaid } from './chart-mermaid.js';
export { allCharts, chartNames, chartNamed, declareChart } from './chart-catalog.js';
