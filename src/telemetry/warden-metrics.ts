/**
 * warden's metric instruments (names in names.ts): made once from a meter, recorded by the
 * session traces (session-traces.ts) and the timed journal (timed-journal.ts).
 */
import type { Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import { attributes, metricNames } from './names.js';

/** The instruments; each records with the attributes a user filters by. */
export interface WardenMetrics {
  readonly sessionsOpen: UpDownCounter;
  readonly sessionsFailed: Counter;
  readonly turns: Counter;
  readonly turnDuration: Histogram;
  readonly restarts: Counter;
  readonly recoveries: Counter;
  readonly journalDuration: Histogram;
}

/** The instruments on `meter`. */
export function wardenMetrics(meter: Meter): WardenMetrics {
  return {
    sessionsOpen: meter.createUpDownCounter(metricNames.sessionsOpen, { description: 'Sessions open now', unit: '{session}' }),
    sessionsFailed: meter.createCounter(metricNames.sessionsFailed, { description: 'Sessions whose agent gave up (restart intensity exceeded)', unit: '{session}' }),
    turns: meter.createCounter(metricNames.turns, { description: 'Turns ended, by stop reason', unit: '{turn}' }),
    turnDuration: meter.createHistogram(metricNames.turnDuration, { description: 'Turn duration, prompt to stop reason', unit: 's' }),
    restarts: meter.createCounter(metricNames.restarts, { description: 'Agent process restarts, by exit reason', unit: '{restart}' }),
    recoveries: meter.createCounter(metricNames.recoveries, { description: 'Sessions resumed after an agent restart', unit: '{recovery}' }),
    journalDuration: meter.createHistogram(metricNames.journalDuration, {
      description: 'Journal write latency',
      unit: 's',
      // Appends take microseconds to milliseconds: the default buckets (0 to 10000) would put all in the first.
      advice: { explicitBucketBoundaries: [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] },
    }),
  };
}

export { attributes };
