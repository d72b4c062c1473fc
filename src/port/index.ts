export * from './env-policy.js';
export * from './line-framer.js';
export * from './stderr-ring.js';
export * from './write-queue.js';
export * from './process-group.js';
export * from './orphan-reaper.js';
export * from './port-exit.js';
export * from './port.js';
