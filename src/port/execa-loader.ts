/**
 * execa, imported when the first process is spawned rather than with the port module:
 * `warden acp` answers `initialize` before it spawns anything, and execa with its
 * dependencies is about 110 modules, 50–60 ms of CPU at startup (docs/benchmarks.md
 * "Startup"). Once loaded, every later spawn is synchronous, as with a static import.
 */
type Execa = typeof import('execa').execa;

let loaded: Execa | undefined;
let loading: Promise<Execa> | undefined;

/** execa's `execa`, if it is loaded already. */
export function loadedExeca(): Execa | undefined {
  return loaded;
}

/** Loads execa (once; a failed import is tried again by the next call). */
export function loadExeca(): Promise<Execa> {
  loading ??= import('execa').then(
    (module) => (loaded = module.execa),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
