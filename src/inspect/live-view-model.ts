/**
 * The live view's model: inspection events in `@statelyai/inspect`'s format (from this
 * process's actors, or from `warden acp --inspect` streams) folded into what the page shows:
 * the actor tree of each source with status, restarts, pids and start times; each state
 * machine's current state with its chart (a session's owner host and epoch too, on a store
 * several hosts share); the pending JSON-RPC requests; and a timeline of
 * starts, exits with their reasons, restarts, escalations and session recoveries.
 *
 * The model knows the host's actors by the shape of their snapshots, not by their code: a
 * supervisor's context has `strategy` and `dynamic`, a port's has `command` and `linesIn`, a
 * pending request's has `method` and `sentAt`, a machine sends its definition. So it reads a
 * stream from another process (another version, even) as well as its own.
 *
 * Memory is bounded: the timeline keeps its last `maxTimeline` entries, an actor that ended
 * is dropped `retainEndedMs` after (a settled request at once, a restarted child when its
 * next incarnation starts), and past `maxActors` new actors are counted, not kept.
 *
 * Pure apart from the time passed in (`now`); tested in spec/inspect/live-view-model.spec.ts.
 *
 * Beside it: the data the page gets (`live-view-data.ts`), charts as the view keeps them
 * (`live-chart.ts`), and the words read from what events carry (`live-view-describe.ts`).
 */

import { leafPaths, parseTakenMove } from '../host/transitions-taken.js';
import type { ChartGraph } from './chart-graph.js';
import { chartOf, liveChart, type LiveChartDefinition, type LiveChartSource, type LiveChartView } from './live-chart.js';
import type {
  LiveActorKind,
  LiveActorStatus,
  LiveActorView,
  LiveLastTransition,
  LiveMachineView,
  LiveOwnerView,
  LivePendingView,
  LiveSourceView,
  LiveTimelineEntry,
  LiveViewState,
} from './live-view-data.js';
import { classify, clientsDetail, cut, describeError, describeOutput, firstLine, isObject, ownerOf, parseDefinition, stateText } from './live-view-describe.js';

export { chartOf, liveChart, type LiveChartDefinition, type LiveChartSource, type LiveChartView, type LiveTransition } from './live-chart.js';
export type * from './live-view-data.js';

/** Options of {@link createLiveViewModel}. */
export interface LiveViewModelOptions {
  /** Timeline entries kept (default 300). */
  readonly maxTimeline?: number;
  /** How long an ended actor stays in view, ms (default 60 s). */
  readonly retainEndedMs?: number;
  /** Actors kept at most; past it new ones are counted in `dropped` (default 5000). */
  readonly maxActors?: number;
  /** Machine configs whose charts are known before any of their actors shows up. */
  readonly machines?: readonly unknown[];
  /**
   * The declared charts of the custom logics the view knows by their snapshots (chart-catalog.ts:
   * `portChart`, `supervisorChart`): their actors are drawn on them like machines.
   */
  readonly declared?: { readonly port?: LiveChartSource; readonly supervisor?: LiveChartSource };
}

/** The model: feed it events, read the view. */
export interface LiveViewModel {
  /** A source starts (a stream connected); `label` names it on the page, `note` goes on the timeline. */
  open(source: string, label: string, now?: number, note?: string): void;
  /** A source ends (its stream closed): its actors are shown stopped, then dropped. */
  close(source: string, now?: number): void;
  /** Folds one inspection event of `source`; anything else is counted and ignored. */
  apply(source: string, event: unknown, now?: number): void;
  /** Drops what ended long enough ago. */
  prune(now?: number): void;
  /** The view now. */
  view(now?: number): LiveViewState;
  /** The graph of a chart the view names (`charts[id]`), for the page to lay out once; `undefined` for an unknown id. */
  graph(id: string): ChartGraph | undefined;
  /** Changes with every change of the view (the server pushes when it moved). */
  readonly version: number;
}

interface ActorRecord {
  readonly key: string;
  readonly source: string;
  readonly sessionId: string;
  readonly parentKey: string | undefined;
  readonly name: string;
  kind: LiveActorKind;
  status: LiveActorStatus;
  state: string | undefined;
  active: string[];
  last: LiveLastTransition | undefined;
  contextName: string | undefined;
  detail: string | undefined;
  pid: number | undefined;
  startedAt: number;
  endedAt: number | undefined;
  restarts: number;
  exit: string | undefined;
  chart: string | undefined;
  announced: boolean;
  /** Ended only because its parent did (or its stream closed): its own end may still come. */
  implicitEnd: boolean;
  request: { method: string; requestId: string; sentAt: number } | undefined;
  session: { sessionId?: string; agent?: string; restarts?: number; failure?: string; owner?: LiveOwnerView } | undefined;
  readonly children: Set<string>;
  /** Incarnations of each child name seen under this actor (restart counts). */
  readonly incarnations: Map<string, number>;
}

interface SourceRecord {
  label: string;
  connected: boolean;
  since: number;
  endedAt: number | undefined;
}

const MAX_CHARTS = 50;
const MAX_NAMES_PER_PARENT = 500;

/** Creates an empty model (see the module comment). */
export function createLiveViewModel(options: LiveViewModelOptions = {}): LiveViewModel {
  const { maxTimeline = 300, retainEndedMs = 60_000, maxActors = 5000, machines = [], declared = {} } = { ...options };
  const actors = new Map<string, ActorRecord>();
  const sources = new Map<string, SourceRecord>();
  const charts = new Map<string, LiveChartDefinition>();
  const timeline: LiveTimelineEntry[] = [];
  const dropped = { actors: 0, events: 0 };
  let version = 0;
  let seq = 0;

  for (const config of machines) {
    const chart = chartOf(config);
    if (chart) charts.set(chart.id, chart);
  }
  // A port or a supervisor is drawn on its declared chart, under an id no machine takes.
  const declaredIds: Partial<Record<LiveActorKind, string>> = {};
  for (const [kind, chart] of Object.entries(declared) as Array<['port' | 'supervisor', LiveChartSource | undefined]>) {
    if (!chart) continue;
    const id = `declared:${chart.id}`;
    charts.set(id, { ...liveChart(chart), id });
    declaredIds[kind] = id;
  }

  const keyOf = (source: string, sessionId: string) => `${source}/${sessionId}`;
  const labelOf = (record: ActorRecord) => (record.name !== record.sessionId ? record.name : (record.contextName ?? record.sessionId));
  const pathOf = (record: ActorRecord): string => {
    const labels: string[] = [];
    for (let at: ActorRecord | undefined = record; at && labels.length < 4; at = at.parentKey ? actors.get(at.parentKey) : undefined) labels.unshift(labelOf(at));
    return labels.join(' › ');
  };
  const log = (record: ActorRecord | undefined, source: string, at: number, kind: LiveTimelineEntry['kind'], severity: LiveTimelineEntry['severity'], text: string) => {
    timeline.push({ seq: ++seq, at, source, kind, severity, subject: record ? pathOf(record) : (sources.get(source)?.label ?? source), text: cut(text) });
    if (timeline.length > maxTimeline) timeline.splice(0, timeline.length - maxTimeline);
  };
  const ensureSource = (source: string, now: number) => {
    if (!sources.has(source)) sources.set(source, { label: source, connected: true, since: now, endedAt: undefined });
  };

  /**
   * Whether its starts and ends go on the timeline: agent processes, state charts, static
   * supervisors. Dynamic supervisors (sessions, terminals) come and go with their owners:
   * only their restarts, errors and escalations are told.
   */
  const notable = (record: ActorRecord) =>
    record.kind === 'port' || record.kind === 'machine' || (record.kind === 'supervisor' && !/\bdynamic$/u.test(record.detail ?? ''));

  /** Tells the timeline an actor is there: a start, or a restart with its count. */
  const announce = (record: ActorRecord, at: number) => {
    if (record.announced || record.kind === 'request') return;
    if (!notable(record) && record.restarts === 0) return;
    record.announced = true;
    const pid = record.pid === undefined ? '' : ` (pid ${record.pid})`;
    if (record.restarts > 0) log(record, record.source, at, 'restart', 'warn', `restarted${pid}: restart ${record.restarts}${record.exit ? ` after ${record.exit}` : ''}`);
    else log(record, record.source, at, 'start', 'info', `started${pid}${record.detail ? `: ${record.detail}` : ''}`);
  };

  /** An actor ended: its reason on the timeline, its descendants stopped with it. */
  const end = (record: ActorRecord, status: LiveActorStatus, at: number, exit: string | undefined, quiet = false) => {
    if (record.status !== 'active' && !(record.implicitEnd && !quiet)) return;
    record.implicitEnd = quiet;
    record.status = status;
    record.endedAt = at;
    record.exit = exit ?? status;
    if (record.kind === 'request') {
      remove(record);
      return;
    }
    if (!quiet) {
      if (record.kind === 'port' && !record.announced) announce(record, at);
      if (record.kind === 'supervisor' && /reached_max_restart_intensity/u.test(record.exit)) {
        log(record, record.source, at, 'escalation', 'error', `restart intensity exceeded: gave up (${record.exit})`);
      } else if (status === 'error' || notable(record)) {
        log(record, record.source, at, 'exit', status === 'error' ? 'error' : 'info', `exited: ${record.exit}`);
      }
    }
    for (const childKey of [...record.children]) {
      const child = actors.get(childKey);
      if (child?.status === 'active') end(child, 'stopped', at, `stopped with ${labelOf(record)}`, true);
    }
  };

  /** Drops an actor and everything under it. */
  const remove = (record: ActorRecord) => {
    for (const childKey of record.children) {
      const child = actors.get(childKey);
      if (child) remove(child);
    }
    actors.delete(record.key);
    if (record.parentKey) actors.get(record.parentKey)?.children.delete(record.key);
  };

  const addActor = (source: string, event: Record<string, unknown>, at: number): ActorRecord | undefined => {
    const sessionId = event.sessionId as string;
    const key = keyOf(source, sessionId);
    const existing = actors.get(key);
    if (existing) return existing;
    if (actors.size >= maxActors) {
      dropped.actors++;
      return undefined;
    }
    const parentKey = typeof event.parentId === 'string' ? keyOf(source, event.parentId) : undefined;
    const parent = parentKey ? actors.get(parentKey) : undefined;
    const name = typeof event.name === 'string' && event.name ? event.name : sessionId;
    const definition = parseDefinition(event.definition);
    const chart = definition ? chartOf(definition) : undefined;
    if (chart && !charts.has(chart.id) && charts.size < MAX_CHARTS) charts.set(chart.id, chart);
    // A definition cut short (or without states) still names a chart known ahead.
    const chartId = chart?.id ?? (isObject(definition) && typeof definition.id === 'string' && charts.has(definition.id) ? definition.id : undefined);
    // A view started late learns past restarts from the host itself (acp-warden's own fields).
    let restarts = typeof event.restarts === 'number' ? event.restarts : 0;
    let exit = typeof event.lastExit === 'string' ? cut(firstLine(event.lastExit)) : undefined;
    if (parent && name !== sessionId) {
      restarts = Math.max(restarts, parent.incarnations.get(name) ?? 0);
      parent.incarnations.delete(name);
      parent.incarnations.set(name, restarts + 1);
      if (parent.incarnations.size > MAX_NAMES_PER_PARENT) parent.incarnations.delete(parent.incarnations.keys().next().value as string);
      // The previous incarnation gives way: its exit becomes this one's last exit.
      for (const siblingKey of parent.children) {
        const sibling = actors.get(siblingKey);
        if (sibling && sibling.name === name && sibling.status !== 'active') {
          exit = sibling.exit;
          remove(sibling);
        }
      }
    }
    const record: ActorRecord = {
      key,
      source,
      sessionId,
      parentKey,
      name,
      kind: chartId !== undefined && charts.has(chartId) ? 'machine' : 'actor',
      status: 'active',
      state: undefined,
      active: [],
      last: undefined,
      contextName: undefined,
      detail: undefined,
      pid: undefined,
      startedAt: at,
      endedAt: undefined,
      restarts,
      exit,
      chart: chartId,
      announced: false,
      implicitEnd: false,
      request: undefined,
      session: undefined,
      children: new Set(),
      incarnations: new Map(),
    };
    actors.set(key, record);
    parent?.children.add(key);
    return record;
  };

  const applySnapshot = (record: ActorRecord, snapshot: Record<string, unknown>, at: number, event?: unknown, taken?: unknown) => {
    const context = isObject(snapshot.context) ? snapshot.context : undefined;
    if (record.kind === 'actor' && context) {
      record.kind = classify(context);
      record.chart ??= declaredIds[record.kind];
    }
    if (snapshot.value !== undefined) {
      record.state = stateText(snapshot.value);
      const active = leafPaths(snapshot.value);
      if (record.chart !== undefined && isObject(event) && typeof event.type === 'string') {
        // The transitions taken, when the stream tells them (a self-transition leaves the value as it was);
        // else the event moved the machine from the leaf it left to the one it entered.
        const move = parseTakenMove(taken);
        const left = record.active.find((path) => !active.includes(path));
        const entered = active.find((path) => !record.active.includes(path));
        if (move && move.transitions.length > 0) record.last = { from: move.from, event: cut(event.type), to: move.to, at, transitions: move.transitions };
        else if (left !== undefined && entered !== undefined) record.last = { from: left, event: cut(event.type), to: entered, at };
      }
      record.active = active;
    }
    if (context) {
      if (typeof context.name === 'string') record.contextName = context.name;
      switch (record.kind) {
        case 'supervisor':
          record.detail = [context.name, context.dynamic === true ? 'dynamic' : context.strategy].filter((part) => typeof part === 'string').join(', ');
          break;
        case 'port':
          if (typeof context.pid === 'number') record.pid = context.pid;
          if (typeof context.startedAt === 'number') record.startedAt = context.startedAt;
          break;
        case 'request':
          record.request = { method: String(context.method), requestId: String(context.id ?? '?'), sentAt: Number(context.sentAt) };
          break;
        case 'machine':
          record.session = {
            ...(typeof context.sessionId === 'string' ? { sessionId: context.sessionId } : {}),
            ...(typeof context.agent === 'string' ? { agent: context.agent } : {}),
            ...(typeof context.restarts === 'number' ? { restarts: context.restarts } : {}),
            ...(typeof context.failure === 'string' ? { failure: context.failure } : {}),
            ...ownerOf(context.owner),
          };
          break;
        default:
          // A connection hub (`warden serve`): its clients, their role and cursor in each session.
          if (Array.isArray(context.clients)) record.detail = clientsDetail(context.clients);
          break;
      }
    }
    // A port is announced once its process has a pid; the others at their first real snapshot.
    if (context && (record.kind !== 'port' || record.pid !== undefined)) announce(record, at);
    const status = snapshot.status;
    if (status === 'done' || status === 'error' || status === 'stopped') {
      // A machine that is done reached a final state: that says more than its (empty) output.
      const done = record.kind === 'machine' && snapshot.output === undefined && record.state ? `final state ${record.state}` : describeOutput(snapshot.output);
      end(record, status, at, status === 'error' ? describeError(snapshot.error) : status === 'done' ? done : 'stopped');
    }
  };

  const applyEvent = (record: ActorRecord, event: Record<string, unknown>, at: number) => {
    if (record.kind !== 'machine') return;
    switch (event.type) {
      case 'agent.restarting':
        log(record, record.source, at, 'session', 'warn', `agent process restarting (restart ${String(event.restarts ?? '?')})`);
        return;
      case 'agent.recovered':
        log(record, record.source, at, 'session', 'info', `recovered after restart ${String(event.restarts ?? '?')}`);
        return;
      case 'agent.failed':
        log(record, record.source, at, 'session', 'error', `failed: ${typeof event.reason === 'string' ? event.reason : 'unknown reason'}`);
        return;
      default:
        return;
    }
  };

  const treeOf = (record: ActorRecord): LiveActorView => {
    const children: LiveActorView[] = [];
    for (const childKey of record.children) {
      const child = actors.get(childKey);
      if (child && child.kind !== 'request') children.push(treeOf(child));
    }
    return {
      key: record.key,
      sessionId: record.sessionId,
      label: labelOf(record),
      kind: record.kind,
      status: record.status,
      ...(record.state === undefined ? {} : { state: record.state }),
      ...(record.detail ? { detail: record.detail } : {}),
      ...(record.pid === undefined ? {} : { pid: record.pid }),
      startedAt: record.startedAt,
      ...(record.endedAt === undefined ? {} : { endedAt: record.endedAt }),
      restarts: record.restarts,
      ...(record.exit === undefined ? {} : { exit: record.exit }),
      children,
    };
  };

  return {
    get version() {
      return version;
    },
    open(source, label, now = Date.now(), note = 'connected') {
      sources.set(source, { label, connected: true, since: now, endedAt: undefined });
      log(undefined, source, now, 'stream', 'info', note);
      version++;
    },
    close(source, now = Date.now()) {
      const record = sources.get(source);
      if (!record || !record.connected) return;
      record.connected = false;
      record.endedAt = now;
      for (const actor of actors.values()) {
        if (actor.source === source && actor.status === 'active') end(actor, 'stopped', now, 'its stream closed', true);
      }
      log(undefined, source, now, 'stream', 'warn', 'disconnected');
      version++;
    },
    apply(source, input, now = Date.now()) {
      if (!isObject(input) || typeof input.type !== 'string' || typeof input.sessionId !== 'string') {
        dropped.events++;
        return;
      }
      ensureSource(source, now);
      const created = Number(input.createdAt);
      const at = Number.isFinite(created) && created > 0 ? created : now;
      const key = keyOf(source, input.sessionId);
      switch (input.type) {
        case '@xstate.actor': {
          const record = addActor(source, input, at);
          if (record && isObject(input.snapshot)) applySnapshot(record, input.snapshot, at);
          // A view started late learns the transition taken last from the host itself (acp-warden's own field).
          const told = isObject(input.lastTransition) ? input.lastTransition : undefined;
          const last = parseTakenMove(told);
          if (record && told && last && record.chart !== undefined && typeof told.event === 'string') {
            const when = Number(told.at);
            record.last = { from: last.from, event: cut(told.event), to: last.to, at: Number.isFinite(when) ? when : at, transitions: last.transitions };
          }
          break;
        }
        case '@xstate.snapshot': {
          if (!isObject(input.snapshot)) break;
          // An actor seen first through a snapshot (its stream reconnected): a root of its own.
          // (Not past the budget: the actor was counted when it was not kept.)
          const fresh = (input.snapshot.status === 'active' || input.snapshot.status === undefined) && actors.size < maxActors;
          const record = actors.get(key) ?? (fresh ? addActor(source, { sessionId: input.sessionId }, at) : undefined);
          if (record) applySnapshot(record, input.snapshot, at, input.event, input.taken);
          break;
        }
        case '@xstate.event': {
          const record = actors.get(key);
          if (record && isObject(input.event)) applyEvent(record, input.event, at);
          break;
        }
        default:
          dropped.events++;
          return;
      }
      version++;
    },
    graph(id) {
      return charts.get(id)?.graph;
    },
    prune(now = Date.now()) {
      let changed = false;
      const ended = [...actors.values()].filter((record) => record.endedAt !== undefined);
      // Oldest first; past the actor budget, ended ones go even before their time.
      ended.sort((a, b) => (a.endedAt as number) - (b.endedAt as number));
      const over = Math.max(0, actors.size - Math.floor(maxActors * 0.9));
      ended.forEach((record, index) => {
        if (index < over || now - (record.endedAt as number) >= retainEndedMs) {
          remove(record);
          changed = true;
        }
      });
      for (const [id, source] of sources) {
        if (source.connected || source.endedAt === undefined || now - source.endedAt < retainEndedMs) continue;
        if ([...actors.values()].some((record) => record.source === id)) continue;
        sources.delete(id);
        changed = true;
      }
      if (changed) version++;
    },
    view(now = Date.now()) {
      const views: LiveSourceView[] = [];
      for (const [id, source] of sources) {
        const roots: LiveActorView[] = [];
        for (const record of actors.values()) {
          if (record.source !== id || record.kind === 'request') continue;
          if (record.parentKey && actors.has(record.parentKey)) continue;
          roots.push(treeOf(record));
        }
        views.push({ id, label: source.label, connected: source.connected, since: source.since, roots });
      }
      const machinesInView: LiveMachineView[] = [];
      const pending: LivePendingView[] = [];
      const used: Record<string, LiveChartView> = {};
      for (const record of actors.values()) {
        if (record.chart) {
          const chart = charts.get(record.chart);
          if (chart) {
            const { graph: _graph, ...listed } = chart;
            used[chart.id] = listed;
          }
          machinesInView.push({
            key: record.key,
            source: record.source,
            label: labelOf(record),
            kind: record.kind,
            chart: record.chart,
            state: record.state ?? chart?.initial ?? '',
            active: record.active.length > 0 ? record.active : chart?.initial ? [chart.initial] : [],
            ...(record.last ? { last: record.last } : {}),
            status: record.status,
            startedAt: record.startedAt,
            ...record.session,
          });
        }
        if (record.kind === 'request' && record.request && record.status === 'active') {
          const parent = record.parentKey ? actors.get(record.parentKey) : undefined;
          pending.push({ key: record.key, source: record.source, ...record.request, via: parent ? pathOf(parent) : '' });
        }
      }
      pending.sort((a, b) => a.sentAt - b.sentAt);
      // The state machines first (the sessions), then the supervisors and the ports.
      const order: Partial<Record<LiveActorKind, number>> = { machine: 0, supervisor: 1, port: 2 };
      machinesInView.sort((a, b) => (order[a.kind] ?? 3) - (order[b.kind] ?? 3));
      // In time order (a view started late tells of actors that started before it did).
      const told = [...timeline].sort((a, b) => a.at - b.at || a.seq - b.seq);
      return { now, sources: views, machines: machinesInView, charts: used, pending, timeline: told, dropped: { ...dropped } };
    },
  };
}
