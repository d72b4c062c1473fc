/**
 * `warden acp --agent NAME`: an ACP agent on this process's stdio, serving the named agent
 * under supervision. stdout carries ACP messages only; everything else goes to stderr.
 */
import { createActor } from 'xstate';
import { agentServerLogic } from '../acp/agent-server.js';
import { agentFor } from '../adapters/agent-factory.js';
import { AgentUnavailableError } from '../adapters/registry.js';
import { stdioTransport } from '../jsonrpc/stdio-transport.js';

/** What `warden acp` was asked for. */
export interface AcpCommandOptions {
  readonly agent: string;
  readonly agentCommand: string | undefined;
  readonly env: Record<string, string | undefined>;
  readonly passthrough: string[];
  readonly inheritEnv: boolean;
}

const usage = 'Usage: warden acp --agent NAME [--agent-command PATH] [--env NAME[=VALUE]]... [--inherit-env]';

/** Parses `warden acp` arguments; a problem is a message that names it and the fix. */
export function parseAcpArgs(args: readonly string[]): AcpCommandOptions | { error: string } {
  let agent: string | undefined;
  let agentCommand: string | undefined;
  const env: Record<string, string | undefined> = {};
  const passthrough: string[] = [];
  let inheritEnv = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    const value = () => {
      const next = args[index + 1];
      if (next === undefined || next.startsWith('--')) throw new Error(`${arg} needs a value. ${usage}`);
      index++;
      return next;
    };
    try {
      if (arg === '--agent') agent = value();
      else if (arg.startsWith('--agent=')) agent = arg.slice('--agent='.length);
      else if (arg === '--agent-command') agentCommand = value();
      else if (arg === '--inherit-env') inheritEnv = true;
      else if (arg === '--env') {
        const setting = value();
        const equals = setting.indexOf('=');
        if (equals < 0) passthrough.push(setting);
        else env[setting.slice(0, equals)] = setting.slice(equals + 1);
      } else return { error: `warden acp: unknown option ${arg}. ${usage}` };
    } catch (error) {
      return { error: `warden acp: ${(error as Error).message}` };
    }
  }
  if (!agent) return { error: `warden acp: --agent is required (claude, codex, gemini, opencode, claude-acp, codex-acp, demo, or acp:<command line>). ${usage}` };
  return { agent, agentCommand, env, passthrough, inheritEnv };
}

/** Runs the ACP agent until the editor closes stdin (or a signal); resolves with the exit status. */
export async function runAcp(args: readonly string[]): Promise<number> {
  const parsed = parseAcpArgs(args);
  if ('error' in parsed) {
    process.stderr.write(`${parsed.error}\n`);
    return 2;
  }
  let agent;
  try {
    agent = agentFor(parsed.agent, {
      ...(parsed.agentCommand ? { agentCommand: parsed.agentCommand } : {}),
      env: parsed.env,
      passthrough: parsed.passthrough,
      envPolicy: parsed.inheritEnv ? 'inherit' : 'isolated',
    });
  } catch (error) {
    if (error instanceof AgentUnavailableError) {
      process.stderr.write(`warden acp: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const server = createActor(agentServerLogic, { input: { transport: stdioTransport(), agent, name: 'editor' } });
  const ended = new Promise<number>((resolve) => {
    server.subscribe({
      complete: () => resolve(0),
      error: (error) => {
        process.stderr.write(`warden acp: ${error instanceof Error ? error.message : String(error)}\n`);
        resolve(1);
      },
    });
  });
  const stop = () => {
    if (server.getSnapshot().status === 'active') server.send({ type: 'supervisor.shutdown' });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  server.start();
  return ended;
}
