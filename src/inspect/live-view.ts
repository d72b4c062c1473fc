/**
 * The live view of a host in its own process (`host.inspect.serve()`): an inspection
 * observer the host gives all its actors, and the view served from what it sees.
 *
 * The observer costs next to nothing while no view is served: it only remembers the actors
 * that are alive (their refs, by session id). `serve()` then starts a model from them (each
 * as an actor event and its current snapshot, restart counts and last exits asked of their
 * supervisors, a machine's last transition as the registry kept it), and from then on folds
 * every inspection event, made safe exactly as the WebSocket inspector sends it
 * (`statelyEventOf`), into that model. When the last view closes, the model is let go.
 */
import type { AnyActorRef, InspectionEvent, Observer } from 'xstate';
import { createLiveActors, type LiveActors } from '../host/live-actors.js';
import { describeExit } from '../supervision/exit-reason.js';
import { portChart, supervisorChart } from './chart-catalog.js';
import { supervisorState } from '../supervision/supervisor-state.js';
import { statelyEventOf } from './stately-event.js';
import type { LiveViewModel } from './live-view-model.js';
import type { LiveViewServer } from './live-view-server.js';

/** Options of {@link createLiveViewTap}. */
export interface LiveViewTapOptions {
  /** Machine configs whose charts the page draws (the host's session machine). */
  readonly machines?: readonly unknown[];
  /** What the page calls this process (default `this process (pid N)`). */
  readonly label?: string;
  /** The page's title. */
  readonly title?: string;
  /**
   * The actors alive so far, when someone else watched them before the tap was made (the
   * host does, so that it loads the view only when it is served); the tap goes on with them.
   */
  readonly live?: LiveActors;
}

/** Options of {@link LiveViewTap.serve}. */
export interface LiveViewServeOptions {
  /** The port on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
}

/** The observer and the views served from it. */
export interface LiveViewTap {
  /** Give it to the root actors (`createActor(logic, { inspect })`). */
  readonly observer: Observer<InspectionEvent>;
  /** Serves the view on 127.0.0.1; rejects with the listen error (`EADDRINUSE`) when the port is taken. */
  serve(options?: LiveViewServeOptions): Promise<LiveViewServer>;
  /** Closes every view served from this tap. */
  close(): Promise<void>;
}

const SOURCE = 'host';

/** Creates the observer; nothing is served until `serve()`. */
export function createLiveViewTap(options: LiveViewTapOptions = {}): LiveViewTap {
  const live = options.live ?? createLiveActors();
  const servers = new Set<LiveViewServer>();
  let model: LiveViewModel | undefined;
  let sweeper: NodeJS.Timeout | undefined;

  const fold = (event: unknown) => {
    try {
      model?.apply(SOURCE, event);
    } catch (error) {
      // The view's bug must not take an actor down: it becomes a warning.
      process.emitWarning(`the live view could not fold an inspection event: ${error instanceof Error ? error.message : String(error)}`, 'AcpWardenLiveViewWarning');
    }
  };

  /** Tells the view of actors that stopped without a word (stopped by their parent). */
  const forget = (forgotten: readonly string[]) => {
    if (!model) return;
    for (const sessionId of forgotten) fold({ type: '@xstate.snapshot', sessionId, createdAt: String(Date.now()), snapshot: { status: 'stopped' }, event: { type: 'xstate.stop' } });
  };
  const sweep = () => forget(live.sweep());

  const observer: Observer<InspectionEvent> = {
    next(event) {
      forget(live.note(event));
      if (model) {
        const stately = statelyEventOf(event, {}, Date.now(), live.moveOf(event));
        if (stately) fold(stately);
      }
    },
  };

  /** A model of the actors alive now, each announced as it was created. */
  const seed = (createLiveViewModel: typeof import('./live-view-model.js').createLiveViewModel): LiveViewModel => {
    const seeded = createLiveViewModel({ machines: options.machines ?? [], declared: { port: portChart, supervisor: supervisorChart } });
    seeded.open(SOURCE, options.label ?? `this process (pid ${process.pid})`, Date.now(), 'live view started');
    sweep();
    for (const { ref, at } of live.values()) {
      const actor = statelyEventOf({ type: '@xstate.actor', actorRef: ref, rootId: '' }, {}, at);
      if (!actor) continue;
      const last = live.lastMove(ref);
      seeded.apply(SOURCE, { ...actor, ...supervisedFacts(ref), ...(last ? { lastTransition: last } : {}) });
      const snapshot = statelyEventOf({ type: '@xstate.snapshot', actorRef: ref, rootId: '', snapshot: ref.getSnapshot(), event: { type: 'acp-warden.liveView.seed' } }, {}, at);
      if (snapshot) seeded.apply(SOURCE, snapshot);
    }
    return seeded;
  };

  return {
    observer,
    async serve(serveOptions = {}) {
      // The model and the server (ws, the page) load with the first view: a host that never
      // serves one (warden acp) does not pay for them. The model is seeded after, from the
      // actors alive then, so nothing that happened meanwhile is missed.
      const [{ createLiveViewModel }, { serveLiveView }] = await Promise.all([import('./live-view-model.js'), import('./live-view-server.js')]);
      const viewModel = model ?? seed(createLiveViewModel);
      model = viewModel;
      let server: LiveViewServer;
      try {
        server = await serveLiveView({ model: viewModel, port: serveOptions.port ?? 0, ...(options.title ? { title: options.title } : {}) });
      } catch (error) {
        if (servers.size === 0) model = undefined;
        throw error;
      }
      servers.add(server);
      sweeper ??= setInterval(sweep, 1000).unref();
      const close = server.close.bind(server);
      return {
        url: server.url,
        port: server.port,
        async close() {
          servers.delete(server);
          if (servers.size === 0) {
            model = undefined;
            if (sweeper) clearInterval(sweeper);
            sweeper = undefined;
          }
          await close();
        },
      };
    },
    async close() {
      const open = [...servers];
      servers.clear();
      model = undefined;
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      await Promise.all(open.map((server) => server.close()));
    },
  };
}

/** What the supervisor of `ref` knows of it: restarts so far and the last exit (the view may start late). */
function supervisedFacts(ref: AnyActorRef): { restarts?: number; lastExit?: string } {
  const parent = (ref as unknown as { _parent?: AnyActorRef })._parent;
  const entry = parent ? supervisorState(parent)?.children.get(ref.id) : undefined;
  if (!entry || entry.ref !== ref) return {};
  return { restarts: entry.restarts, ...(entry.lastExit ? { lastExit: describeExit(entry.lastExit) } : {}) };
}
