/**
 * ACP method names, from the SDK's generated tables (never typed by hand), with the ACP
 * type of each method's params and result.
 */
import type { AGENT_METHODS as SDK_UNSTABLE_AGENT_METHODS } from '@agentclientprotocol/sdk/unstable';
import { createRequire } from 'node:module';

type Sdk = typeof import('@agentclientprotocol/sdk');

// The SDK's own module of method tables (plain constants), not its root: the root builds all
// its zod schemas on import, which `warden acp` does not need before `initialize` is answered
// (schemas.ts loads them when a check needs them). Found beside the JSON schema it exports.
const require = createRequire(import.meta.url);
const sdkMethods = require(require.resolve('@agentclientprotocol/sdk/schema/v1/schema.json').replace(/schema[\\/]v1[\\/]schema\.json$/u, 'dist/v1/schema/index.js')) as Pick<Sdk, 'AGENT_METHODS' | 'CLIENT_METHODS' | 'PROTOCOL_METHODS' | 'PROTOCOL_VERSION'>;

/** Methods an agent serves, by the SDK's names for them (`session_new: 'session/new'`). */
export const AGENT_METHODS: Sdk['AGENT_METHODS'] = sdkMethods.AGENT_METHODS;
/** Methods a client serves. */
export const CLIENT_METHODS: Sdk['CLIENT_METHODS'] = sdkMethods.CLIENT_METHODS;
/** Methods of the protocol itself (`$/cancel_request`). */
export const PROTOCOL_METHODS: Sdk['PROTOCOL_METHODS'] = sdkMethods.PROTOCOL_METHODS;
/** The ACP protocol version the SDK speaks. */
export const PROTOCOL_VERSION: Sdk['PROTOCOL_VERSION'] = sdkMethods.PROTOCOL_VERSION;

/**
 * The unstable agent methods warden serves and calls, checked against the SDK's unstable table
 * at compile time (a type-only import: the unstable entry point is not loaded at run time).
 */
export const UNSTABLE_AGENT_METHODS = Object.freeze({ session_fork: 'session/fork' } as const satisfies Pick<typeof SDK_UNSTABLE_AGENT_METHODS, 'session_fork'>);

/** Requests an agent serves (client → agent), with their params and result type names. */
export const agentRequests = {
  [AGENT_METHODS.initialize]: { params: 'InitializeRequest', result: 'InitializeResponse' },
  [AGENT_METHODS.authenticate]: { params: 'AuthenticateRequest', result: 'AuthenticateResponse' },
  [AGENT_METHODS.logout]: { params: 'LogoutRequest', result: 'LogoutResponse' },
  [AGENT_METHODS.session_new]: { params: 'NewSessionRequest', result: 'NewSessionResponse' },
  [AGENT_METHODS.session_load]: { params: 'LoadSessionRequest', result: 'LoadSessionResponse' },
  [AGENT_METHODS.session_resume]: { params: 'ResumeSessionRequest', result: 'ResumeSessionResponse' },
  [AGENT_METHODS.session_list]: { params: 'ListSessionsRequest', result: 'ListSessionsResponse' },
  [AGENT_METHODS.session_close]: { params: 'CloseSessionRequest', result: 'CloseSessionResponse' },
  [AGENT_METHODS.session_delete]: { params: 'DeleteSessionRequest', result: 'DeleteSessionResponse' },
  [AGENT_METHODS.session_set_mode]: { params: 'SetSessionModeRequest', result: 'SetSessionModeResponse' },
  [AGENT_METHODS.session_set_config_option]: { params: 'SetSessionConfigOptionRequest', result: 'SetSessionConfigOptionResponse' },
  [AGENT_METHODS.session_prompt]: { params: 'PromptRequest', result: 'PromptResponse' },
} as const;

/** Unstable requests an agent serves when it advertises them (`sessionCapabilities.fork`). */
export const unstableAgentRequests = {
  [UNSTABLE_AGENT_METHODS.session_fork]: { params: 'ForkSessionRequest', result: 'ForkSessionResponse' },
} as const;

/** Requests a client serves (agent → client). */
export const clientRequests = {
  [CLIENT_METHODS.session_request_permission]: { params: 'RequestPermissionRequest', result: 'RequestPermissionResponse' },
  [CLIENT_METHODS.fs_read_text_file]: { params: 'ReadTextFileRequest', result: 'ReadTextFileResponse' },
  [CLIENT_METHODS.fs_write_text_file]: { params: 'WriteTextFileRequest', result: 'WriteTextFileResponse' },
  [CLIENT_METHODS.terminal_create]: { params: 'CreateTerminalRequest', result: 'CreateTerminalResponse' },
  [CLIENT_METHODS.terminal_output]: { params: 'TerminalOutputRequest', result: 'TerminalOutputResponse' },
  [CLIENT_METHODS.terminal_wait_for_exit]: { params: 'WaitForTerminalExitRequest', result: 'WaitForTerminalExitResponse' },
  [CLIENT_METHODS.terminal_kill]: { params: 'KillTerminalRequest', result: 'KillTerminalResponse' },
  [CLIENT_METHODS.terminal_release]: { params: 'ReleaseTerminalRequest', result: 'ReleaseTerminalResponse' },
  [CLIENT_METHODS.elicitation_create]: { params: 'CreateElicitationRequest', result: 'CreateElicitationResponse' },
} as const;

/** Notifications an agent receives. */
export const agentNotifications = {
  [AGENT_METHODS.session_cancel]: 'CancelNotification',
} as const;

/** Notifications a client receives. */
export const clientNotifications = {
  [CLIENT_METHODS.session_update]: 'SessionNotification',
  [CLIENT_METHODS.elicitation_complete]: 'CompleteElicitationNotification',
} as const;
