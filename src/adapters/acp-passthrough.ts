/**
 * Native ACP agents (`gemini --acp`, `opencode acp`, claude-agent-acp, codex-acp,
 * `acp:<command line>`), passed through under supervision.
 *
 * A native agent for our ACP agent server that is itself an ACP client of the real agent:
 * the agent process is a port and our client rides on it, rest_for_one under one supervisor.
 * Requests go down, updates come up, and the agent's requests to the client (permissions,
 * files, terminals) are relayed to the editor, which advertised what it serves. When the
 * agent process dies, the prompt in flight fails naming the crash, the process restarts
 * with backoff, the connection is initialized again, and every open session is re-attached
 * with `session/resume` (or `session/load`, its replay kept from the editor, which has the
 * history, until round trips show it is over: Gemini goes on replaying after its answer) when
 * the agent advertises them; the next prompt continues the conversation.
 *
 * The host hears it per open session (`SessionLifecycleOutput`): `session.restarting` when
 * the agent process ended and will be restarted, `session.recovered` for each session
 * re-attached after the restart, `session.failed` for a session that could not be
 * re-attached and for every open session when the supervisor gives up. `session/resume`
 * and `session/load` (with the host's `_meta`) go to the agent as they are.
 *
 * The handler is a state machine (src/adapters/passthrough/machine.ts: booting → ready ⇄
 * recovering → failed); its chart is in `warden inspect --export` as `acp-passthrough`.
 */
import type { NativeAgent } from '../protocol/native-agent.js';
import { agentSupervisorOf } from './passthrough/agent-supervisor.js';
import { passthroughMachine } from './passthrough/machine.js';
import type { AcpPassthroughOptions } from './passthrough/options.js';
import { passthroughSessionRoute } from './passthrough/session-route.js';

export type { AcpPassthroughOptions } from './passthrough/options.js';

/** A native agent that passes ACP through to an ACP agent process, under supervision. */
export function createAcpPassthrough(options: AcpPassthroughOptions): NativeAgent {
  return {
    logic: passthroughMachine,
    input: options,
    agentInfo: { name: options.name, version: 'unknown' },
    // The passthrough itself always serves session/close: it forgets the session (never
    // re-attached after a restart) and forwards the close when the agent advertises it.
    capabilities: { sessionCapabilities: { close: {} } },
    // What to advertise is what the agent behind says: the server asks us.
    delegateInitialize: true,
    cancelGraceMs: 10_000,
    // A prompt of an open session goes from the host straight to the agent's client while it is ready.
    routeSession: passthroughSessionRoute,
    // tool_call/cancel and terminal/cancel go to its agent (src/acp/agent-client-cancel.ts decides).
    cancelsWork: true,
    supervisors: (agent) => {
      const supervisor = agentSupervisorOf(agent);
      return supervisor ? [supervisor] : [];
    },
  };
}
