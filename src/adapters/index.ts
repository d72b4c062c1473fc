export * from './adapter.js';
export * from './adapter-agent.js';
export * from './resume-check.js';
export * from './claude/adapter.js';
export * from './codex/adapter.js';
export * from './registry.js';
export * from './acp-passthrough.js';
export * from './agent-factory.js';
