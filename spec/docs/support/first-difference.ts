/** Where a committed generated page first differs from what its generator makes now, for a failure message. */
export function firstDifference(committed: string, generated: string): string | undefined {
  if (committed === generated) return undefined;
  const a = committed.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((text, index) => text !== b[index]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}: committed ${JSON.stringify(a[at] ?? '(end of file)')}, generated ${JSON.stringify(b[at] ?? '(end of file)')}`;
}
