/** Whether a process is still there (the commands' own leak checks, `warden demo` and `warden chaos`). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
