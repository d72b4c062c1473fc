/**
 * `instanceof` for the journal's errors that holds across copies of a module: a process that
 * loads acp-warden twice (as CommonJS and as ESM: a test runner on tsx requires the specs'
 * imports while the host imports the PostgreSQL journal dynamically) has two classes of each
 * name, and a plain `instanceof` would tell a fenced write from a failed one by accident. Each
 * error carries a global brand per class of its chain (`Symbol.for`), and the classes test that.
 * {@link BrandedError} does both for the classes that extend it.
 */

const brandOf = (name: string): symbol => Symbol.for(`acp-warden/${name}`);

/** Marks `error` with the brand of `target` (its `new.target`) and of each class above it, up to `Error`. */
function markBrands(error: object, target: abstract new (...args: never[]) => unknown): void {
  for (let cls: unknown = target; typeof cls === 'function' && cls !== Error; cls = Object.getPrototypeOf(cls)) {
    Object.defineProperty(error, brandOf((cls as { name: string }).name), { value: true });
  }
}

/** Whether `value` carries the brand of the class named `name` (see {@link markBrands}). */
function hasBrand(value: unknown, name: string): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brandOf(name)] === true;
}

/**
 * The base of the journal's errors: an instance carries the brand of its class and of each
 * class above it, and `instanceof` any of them tests the brand, so it holds across copies of
 * the module (see the module's doc). A subclass declares its `name` and its message only.
 */
export class BrandedError extends Error {
  /** `value instanceof C` for `C` this class or one below it: whether `value` carries `C`'s brand. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, this.name);
  }
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    markBrands(this, new.target);
  }
}
