/**
 * A command's flags as one declarative table: for each flag, the shape of its value, the
 * settings field it fills, its default and its help line. One generic parser turns argv into
 * the command's settings object from the table, the options block of `--help` is rendered
 * from it, and so is docs/reference/cli.md (spec/docs/support/cli-reference.ts): a flag has one
 * name and one shape from the command line to the code that uses it.
 */
import { ArgumentError, readFlags } from './arguments.js';

/** How a flag's value is read: what it accepts (said in errors and in the reference) and what it becomes. */
export interface Shape<T = unknown> {
  /** What the value may be, for the reference: `seconds > 0, kept in ms`. */
  readonly accepts: string;
  /** The value from its text; a bad one throws an {@link ArgumentError} naming `flag`, the text and what is accepted. */
  read(flag: string, text: string): T;
}

/** One flag of a command's table. */
export interface Flag<TSettings> {
  /** The settings field the flag fills. */
  readonly field: keyof TSettings & string;
  /** The value's placeholder in the help (`SECONDS`); absent: a switch, which sets its field to `true`. */
  readonly value?: string;
  /** How the value is read; absent: the text as given. */
  readonly shape?: Shape;
  /**
   * `append`: repeatable, each value added to the field's list; `forward`: repeatable, the flag
   * and its text added as given (`--store x` → `['--store', 'x']`), for a command that hands it on.
   */
  readonly repeat?: 'append' | 'forward';
  /** The field's value when the flag is absent (a function: computed at parse time, as a path under the home directory). */
  readonly default?: unknown;
  /** The help text, lines after the first indented under it. */
  readonly help: string;
}

/** A command's flags, keyed by name (`'--store'`), in the order its `--help` lists them. */
export type FlagTable<TSettings> = Readonly<Record<string, Flag<TSettings>>>;

/** The settings a table fills with nothing given: each default, `false` for a switch, `[]` for a repeatable flag. */
export function tableDefaults<TSettings>(table: FlagTable<TSettings>): TSettings {
  const settings: Record<string, unknown> = {};
  for (const flag of Object.values(table)) {
    if (flag.repeat) settings[flag.field] = [];
    else if (flag.default !== undefined) settings[flag.field] = typeof flag.default === 'function' ? (flag.default as () => unknown)() : flag.default;
    else settings[flag.field] = flag.value === undefined ? false : undefined;
  }
  return settings as TSettings;
}

/**
 * Turns `args` into the command's settings from its table. Returns `'help'` for `-h` / `--help`;
 * throws an {@link ArgumentError} for an unknown flag, a missing value or a value of the wrong
 * shape (`hint`, appended to the first two, says where the options are described).
 */
export function parseFlags<TSettings>(table: FlagTable<TSettings>, args: readonly string[], hint: string): TSettings | 'help' {
  const settings = tableDefaults(table) as Record<string, unknown>;
  const handlers = Object.fromEntries(
    Object.entries(table).map(([name, flag]) => [
      name,
      (value: () => string) => {
        if (flag.repeat === 'forward') (settings[flag.field] as unknown[]).push(...(flag.value === undefined ? [name] : [name, value()]));
        else if (flag.value === undefined) settings[flag.field] = true;
        else {
          const text = value();
          const read = flag.shape ? flag.shape.read(name, text) : text;
          if (flag.repeat === 'append') (settings[flag.field] as unknown[]).push(read);
          else settings[flag.field] = read;
        }
      },
    ]),
  );
  return readFlags(args, handlers, hint) ?? (settings as TSettings);
}

/** A row of an options block that is not a flag of the table (`-h, --help`). */
export interface HelpRow {
  readonly label: string;
  readonly help: string;
}

/**
 * The options block of `--help`: one row per flag of `table` (or of `only`, in that order, and
 * the extra rows), the flag and its placeholder padded to `width` (two spaces after a longer
 * one), the help's later lines indented under its first.
 */
export function optionRows<TSettings>(table: FlagTable<TSettings>, width: number, options: { only?: readonly string[]; overrides?: Readonly<Record<string, string>>; extra?: readonly HelpRow[] } = {}): string {
  const names = options.only ?? Object.keys(table);
  const rows: HelpRow[] = names.map((name) => {
    const flag = table[name];
    if (!flag) throw new Error(`optionRows: ${name} is not in the table`);
    return { label: flag.value === undefined ? name : `${name} ${flag.value}`, help: options.overrides?.[name] ?? flag.help };
  });
  return [...rows, ...(options.extra ?? [])]
    .map(({ label, help }) => {
      const [first, ...rest] = help.split('\n');
      const head = label.length < width ? label.padEnd(width) : `${label}  `;
      return [`  ${head}${first}`, ...rest.map((line) => `  ${' '.repeat(width)}${line}`)].join('\n');
    })
    .join('\n');
}

/** The `-h, --help` row. */
export const helpRow = (help = 'this help'): HelpRow => ({ label: '-h, --help', help });

/** A command's problem with its arguments as the message it prints (`warden acp: …`), or rethrows what is not one. */
export function argumentProblem(command: string, error: unknown): { error: string } {
  if (error instanceof ArgumentError) return { error: `${command}: ${error.message}` };
  throw error;
}
