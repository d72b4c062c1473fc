/**
 * What the launch tests share: a bin directory that is the WHOLE PATH an editor gives warden
 * (so an agent is found by its bare name or not at all), and a `warden` command in it, as
 * `npm install -g .` would put there.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { wardenMain } from './real-agents-harness.js';
import { writeShim } from './warden-process.js';


/**
 * Makes `directory` (created) hold `node` (this Node), `warden` (a script running warden's
 * build with `node` from the PATH, like the package's `#!/usr/bin/env node` bin) and one
 * symlink per entry of `commands` (name → file). Returns the directory, to be used as PATH.
 */
export function pathDirectory(directory: string, commands: Readonly<Record<string, string>> = {}): string {
  mkdirSync(directory, { recursive: true });
  symlinkSync(process.execPath, join(directory, 'node'));
  const warden = join(directory, 'warden');
  writeShim(warden, `node '${wardenMain}'`);
  for (const [name, target] of Object.entries(commands)) symlinkSync(target, join(directory, name));
  return directory;
}

/** An executable at `path` that runs `module` with `node` from the PATH (for modules without the x bit). */
export function nodeCommand(path: string, module: string): string {
  writeShim(path, `node '${module}'`);
  return path;
}
