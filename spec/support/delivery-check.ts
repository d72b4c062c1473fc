/**
 * The delivery invariant for one client cursor (issue 28): the journal seqs of the updates a
 * client got, in the order it got them, against the seqs of the entries the journal holds that
 * the client must see. Every journaled entry after the cursor's start arrives exactly once, in
 * seq order, and nothing arrives that the journal does not hold (no seq, or an unknown seq).
 */

/**
 * The violations of exact delivery (empty: exact). `received`: the seqs as they came
 * (`undefined`: an update without one); `journaled`: the seqs the client must see, in journal
 * order; `after`: where its cursor started (exclusive; 0: the whole history).
 */
export function deliveryViolations(received: readonly (number | undefined)[], journaled: readonly number[], after = 0): string[] {
  const violations: string[] = [];
  const held = new Set(journaled);
  const seen = new Set<number>();
  let previous = after;
  for (const seq of received) {
    if (seq === undefined) violations.push('an update without a seq (not journaled)');
    else if (!held.has(seq)) violations.push(`seq ${seq} is not in the journal`);
    else if (seen.has(seq)) violations.push(`seq ${seq} arrived twice`);
    else if (seq <= previous) violations.push(`seq ${seq} arrived after ${previous} (out of order)`);
    if (seq !== undefined) {
      seen.add(seq);
      if (seq > previous) previous = seq;
    }
  }
  const lost = journaled.filter((seq) => seq > after && !seen.has(seq));
  if (lost.length > 0) violations.push(`lost: ${lost.join(', ')}`);
  return violations;
}
