/** Whether process `pid` still exists (a zombie counts; EPERM means it exists, not ours). */
export function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
