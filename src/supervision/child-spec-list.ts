/**
 * Validating a supervisor's list of child specs: each spec normalised (`child-spec.ts`)
 * and the ids unique among them, as OTP's `check_startspec` does before anything starts.
 */
import { normalizeChildSpec, type ChildSpec, type NormalizedChildSpec } from './child-spec.js';
import type { NormalizedFlags } from './supervisor-flags.js';
import { SupervisorSpecError } from './spec-error.js';

/**
 * Validates specs and their ids' uniqueness; returns them normalised.
 *
 * @throws SupervisorSpecError on the first invalid spec or repeated id.
 */
export function checkChildSpecs(specs: readonly ChildSpec[], flags: NormalizedFlags): NormalizedChildSpec[] {
  const seen = new Set<string>();
  return specs.map((spec) => {
    const normalized = normalizeChildSpec(spec, flags.autoShutdown);
    if (seen.has(normalized.id)) {
      throw new SupervisorSpecError({ field: 'id', value: normalized.id, expected: 'unique among the children', childId: normalized.id });
    }
    seen.add(normalized.id);
    return normalized;
  });
}
