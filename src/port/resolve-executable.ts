import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** Why an executable cannot be run, found before spawning. */
export interface ExecutableProblem {
  readonly code: 'ENOENT' | 'EACCES';
  readonly message: string;
}

/**
 * Finds `command` the way `execvp` will (on the child's PATH, or as a path relative to
 * `cwd`): the file that would run, or why none can.
 */
export function findExecutable(command: string, env: Readonly<Record<string, string>>, cwd: string): { readonly path: string } | ExecutableProblem {
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    return checkFile(path) ?? { path };
  }
  let denied: ExecutableProblem | undefined;
  for (const directory of (env.PATH ?? '').split(delimiter)) {
    if (!directory) continue;
    const path = join(isAbsolute(directory) ? directory : resolve(cwd, directory), command);
    const problem = checkFile(path);
    if (!problem) return { path };
    if (problem.code === 'EACCES') denied ??= problem;
  }
  return denied ?? { code: 'ENOENT', message: `${command} was not found on PATH` };
}

/**
 * Whether `command` can run (see `findExecutable`), so that a missing or non-executable CLI
 * is a synchronous start failure with a clear reason rather than a process that "started"
 * and died. Returns `undefined` when it can run.
 */
export function checkExecutable(command: string, env: Readonly<Record<string, string>>, cwd: string): ExecutableProblem | undefined {
  const found = findExecutable(command, env, cwd);
  return 'path' in found ? undefined : found;
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
