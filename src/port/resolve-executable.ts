import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** Why an executable cannot be run, found before spawning. */
export interface ExecutableProblem {
  readonly code: 'ENOENT' | 'EACCES';
  readonly message: string;
}

/**
 * Finds `command` the way `execvp` will (on the child's PATH, or as a path relative to
 * `cwd`), so that a missing or non-executable CLI is a synchronous start failure with a
 * clear reason rather than a process that "started" and died. Returns `undefined` when it
 * can run.
 */
export function checkExecutable(command: string, env: Readonly<Record<string, string>>, cwd: string): ExecutableProblem | undefined {
  if (command.includes('/')) return checkFile(isAbsolute(command) ? command : resolve(cwd, command));
  let denied: ExecutableProblem | undefined;
  for (const directory of (env.PATH ?? '').split(delimiter)) {
    if (!directory) continue;
    const problem = checkFile(join(isAbsolute(directory) ? directory : resolve(cwd, directory), command));
    if (!problem) return undefined;
    if (problem.code === 'EACCES') denied ??= problem;
  }
  return denied ?? { code: 'ENOENT', message: `${command} was not found on PATH` };
}

function checkFile(path: string): ExecutableProblem | undefined {
  try {
    if (!statSync(path).isFile()) return { code: 'EACCES', message: `${path} is not a file` };
  } catch {
    return { code: 'ENOENT', message: `${path} does not exist` };
  }
  try {
    accessSync(path, constants.X_OK);
    return undefined;
  } catch {
    return { code: 'EACCES', message: `${path} is not executable` };
  }
}
