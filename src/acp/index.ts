export * from './methods.js';
export * from './schemas.js';
export * from './native-agent.js';
export * from './agent-server.js';
export * from './agent-client.js';
export * from './demo-agent.js';
export * from './workspace-fs.js';
export * from './terminals.js';
