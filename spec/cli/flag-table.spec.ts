/**
 * The command line's flag tables (src/cli/flag-table.ts): one generic parser turns argv into a
 * command's settings object from its table, and `--help`'s options block is rendered from the
 * same table (issue 29, "Options normalised once", "CLI generated from the parser's table").
 */
import { expect } from 'chai';
import { commands } from '../../src/cli/commands.js';
import { seconds, whole } from '../../src/cli/flag-shapes.js';
import { helpRow, optionRows, parseFlags, type FlagTable } from '../../src/cli/flag-table.js';

interface Example {
  timeoutMs: number;
  limit: number;
  name: string | undefined;
  quiet: boolean;
  tags: string[];
  handed: string[];
}

const example: FlagTable<Example> = {
  '--timeout': { field: 'timeoutMs', value: 'SECONDS', shape: seconds, default: 5000, help: 'how long (default 5)' },
  '--limit': { field: 'limit', value: 'N', shape: whole('things'), default: 3, help: 'at most N\nthings' },
  '--name': { field: 'name', value: 'NAME', help: 'a name' },
  '--quiet': { field: 'quiet', help: 'say less' },
  '--tag': { field: 'tags', value: 'TAG', repeat: 'append', help: 'a tag (repeatable)' },
  '--store': { field: 'handed', value: 'PATH', repeat: 'forward', help: 'handed on' },
  '--inherit-env': { field: 'handed', repeat: 'forward', help: 'handed on' },
};

describe('flag tables: one parser and the help from the same table', () => {
  it('gives every default, false for a switch and [] for a repeatable flag when nothing is given', () => {
    expect(parseFlags(example, [], 'hint')).to.deep.equal({ timeoutMs: 5000, limit: 3, name: undefined, quiet: false, tags: [], handed: [] });
  });

  it('reads each value into its shape and field: units converted, inline values, repeats appended, forwarded flags kept as given', () => {
    const parsed = parseFlags(example, ['--timeout=1.5', '--limit', '0', '--name', 'x', '--quiet', '--tag', 'a', '--tag', 'b', '--store', 'j.sqlite', '--inherit-env'], 'hint');
    expect(parsed).to.deep.equal({ timeoutMs: 1500, limit: 0, name: 'x', quiet: true, tags: ['a', 'b'], handed: ['--store', 'j.sqlite', '--inherit-env'] });
  });

  it('names the flag, the bad value and what is accepted; an unknown flag and a missing value carry the hint', () => {
    expect(() => parseFlags(example, ['--limit', '2.5'], 'hint')).to.throw('--limit expects a whole number ≥ 0 (things), got "2.5"');
    expect(() => parseFlags(example, ['--timeout', 'soon'], 'hint')).to.throw('--timeout expects a positive number, got "soon"');
    expect(() => parseFlags(example, ['--bogus'], 'See --help.')).to.throw('unknown option --bogus. See --help.');
    expect(() => parseFlags(example, ['--name'], 'See --help.')).to.throw('--name needs a value. See --help.');
    expect(parseFlags(example, ['--limit', 'nope', '--help'], 'hint'), 'help wins wherever it stands').to.equal('help');
  });

  it('renders the options block: placeholders, the help column, later lines under the first, two spaces after a long label', () => {
    expect(optionRows(example, 16, { only: ['--limit', '--quiet', '--store'], extra: [helpRow()] })).to.equal(
      ['  --limit N       at most N', '                  things', '  --quiet         say less', '  --store PATH    handed on', '  -h, --help      this help'].join('\n'),
    );
    expect(optionRows(example, 8, { only: ['--timeout'] })).to.equal('  --timeout SECONDS  how long (default 5)');
  });

  it("each command's --help names every flag of its tables (but the bridge's forwarded agent options, named by warden acp's own)", async () => {
    for (const [name, command] of Object.entries(commands)) {
      const usage = typeof command.usage === 'string' ? command.usage : await command.usage();
      for (const form of await command.forms()) {
        const help = form.help?.text ?? usage;
        for (const [flag, entry] of Object.entries(form.flags)) {
          if (entry.repeat === 'forward') continue;
          expect(help, `warden ${name}: ${flag}`).to.match(new RegExp(`${flag}(?![a-z-])`, 'u'));
        }
      }
    }
  });
});
