/**
 * An inspection observer whose target loads on demand: `createHost({ inspect: 'ws://…' })`
 * loads the inspector (src/inspect/) with a dynamic import, so the host never imports the layer
 * that sits on top of it, and `warden acp` without `--inspect` never loads it at all. Events
 * that come before the inspector has loaded are held, the oldest dropped past `maxHeld`: the
 * inspector holds no more itself while its socket connects (its `maxDeferred`, 200).
 */
import type { InspectionEvent, Observer } from 'xstate';

/** What the loader gives: the observer to feed, and how to stop it. */
export interface LoadedObserver {
  readonly inspect: Observer<InspectionEvent>;
  stop(): void;
}

/** An observer in front of one still loading. */
export interface ObserverOnDemand {
  readonly observer: Observer<InspectionEvent>;
  /** Stops the loaded observer (or the one still loading, once it arrives); idempotent. */
  stop(): void;
}

/** Starts `load()` now; feeds what it gives every event, those held meanwhile first. */
export function observerOnDemand(load: () => Promise<LoadedObserver>, { maxHeld = 200, what = 'the inspector' } = {}): ObserverOnDemand {
  let target: LoadedObserver | undefined;
  let stopped = false;
  const held: InspectionEvent[] = [];
  load().then(
    (loaded) => {
      if (stopped) return loaded.stop();
      target = loaded;
      for (const event of held.splice(0)) loaded.inspect.next?.(event);
    },
    (error: unknown) => {
      stopped = true;
      held.length = 0;
      process.emitWarning(`${what} could not be loaded: ${error instanceof Error ? error.message : String(error)}`, 'AcpWardenInspectorWarning');
    },
  );
  return {
    observer: {
      next(event) {
        if (target) target.inspect.next?.(event);
        else if (!stopped) {
          held.push(event);
          if (held.length > maxHeld) held.shift();
        }
      },
    },
    stop() {
      stopped = true;
      held.length = 0;
      target?.stop();
      target = undefined;
    },
  };
}
