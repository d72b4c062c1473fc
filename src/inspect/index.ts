export { connectInspector, parentSessionId, statelyEventOf, type Inspection, type InspectorConnectionOptions } from './inspector.js';
export { inspectionPayload, REDACTED, type PayloadLimits } from './inspection-payload.js';
export { createLogSink, LogFileError, logFileWriter, type LogFileWrite, type LogFileWriterOptions, type LogSinkOptions } from './log-sink.js';
export {
  createLiveViewModel,
  type LiveActorKind,
  type LiveActorStatus,
  type LiveActorView,
  type LiveChartDefinition,
  type LiveChartView,
  type LiveLastTransition,
  type LiveMachineView,
  type LiveOwnerView,
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
export { chartOfConfig, type ConfigChart } from './chart-config.js';
export { chartGraph, labelLines, transitionLabel, CHART_LAYOUT_OPTIONS, type ChartGraph, type ChartGraphEdge, type ChartGraphEdgeInfo, type ChartGraphNode, type ChartGraphNodeInfo } from './chart-graph.js';
export { layoutChart, layoutGraph } from './chart-layout.js';
export { CHART_DRAW_SCRIPT, CHART_SVG_CSS, type ChartDrawElement, type ChartDrawOptions, type ChartHighlight } from './chart-draw-script.js';
export { chartSvg, drawChart, graphSvg } from './chart-svg.js';
export { allCharts, chartNames, chartNamed, declareChart } from './chart-catalog.js';
