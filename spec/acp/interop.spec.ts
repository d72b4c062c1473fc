/**
 * Interop with the official SDK over real stdio subprocesses: the SDK's client
 * (spec/support/sdk-client.mjs, built only with @agentclientprotocol/sdk) drives our agent
 * side serving the demo agent (spec/support/warden-agent.ts), through every stable method.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const sdkClient = fileURLToPath(new URL('../support/sdk-client.mjs', import.meta.url));
const wardenAgent = fileURLToPath(new URL('../support/warden-agent.ts', import.meta.url));

interface Step {
  step: string;
  method: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

interface Report {
  ok: boolean;
  steps: Step[];
  updates: Array<{ update: { sessionUpdate: string } }>;
  served: Array<{ method: string }>;
  summary: Record<string, unknown>;
  error?: unknown;
}

function drive(scenario: string, env: Record<string, string> = {}, extra: string[] = []): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [sdkClient, '--scenario', scenario, ...extra, '--', process.execPath, '--import', 'tsx', wardenAgent],
      { env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const line = stdout.trim().split('\n').at(-1) ?? '';
        try {
          const report = JSON.parse(line) as Report;
          resolve(report);
        } catch {
          reject(new Error(`sdk-client printed no report (${error?.message ?? 'no error'}):\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

function step(report: Report, name: string): Step {
  const found = report.steps.find((entry) => entry.step === name || entry.method === name);
  if (!found) throw new Error(`no step ${name} in ${report.steps.map((entry) => entry.step).join(', ')}`);
  return found;
}

describe('ACP interop: the official SDK client drives our agent side', function () {
  this.timeout(90_000);

  it('lifecycle: initialize, new, set_mode, set_config_option, prompt, list, load, resume, close, delete, logout', async () => {
    const report = await drive('lifecycle');
    expect(report.ok, JSON.stringify(report.error)).to.equal(true);
    expect(step(report, 'initialize').result).to.deep.include({ protocolVersion: 1 });
    expect(report.summary.authenticated).to.equal(true);
    for (const method of ['authenticate', 'session/new', 'session/set_mode', 'session/set_config_option', 'session/prompt', 'session/list', 'session/load', 'session/resume', 'session/close', 'session/delete', 'logout']) {
      const entry = step(report, method);
      expect(entry.error, `${method}: ${JSON.stringify(entry.error)}`).to.equal(undefined);
    }
    expect(step(report, 'session/prompt').result).to.deep.equal({ stopReason: 'end_turn' });
    const summary = report.summary as { list: { includesNewSession: boolean }; load: { replayed: string[] }; resume: { replayed: string[] } };
    expect(summary.list.includesNewSession).to.equal(true);
    expect(summary.load.replayed).to.include('user_message_chunk');
    expect(summary.resume.replayed).to.deep.equal([]);
  });

  it('permission: the demo agent asks, the SDK client allows, the tool completes', async () => {
    const report = await drive('permission');
    expect(report.ok).to.equal(true);
    expect(report.summary).to.deep.include({ stopReason: 'end_turn' });
    expect(report.summary.toolCallStatuses).to.deep.equal(['tool_call:pending', 'tool_call_update:completed']);
    expect(report.served.map((entry) => entry.method)).to.deep.equal(['session/request_permission']);
  });

  it('cancel: the prompt ends "cancelled", no update after its answer, and the next prompt works', async () => {
    const report = await drive('cancel', { DEMO_WORD_DELAY_MS: '100' });
    expect(report.ok).to.equal(true);
    expect(report.summary).to.deep.include({ stopReason: 'cancelled' });
    // ACP allows updates between the cancel and the answer; none may follow the answer.
    const promptStep = report.steps.find((entry) => entry.method === 'session/prompt') as Step & { atMs: number; ms: number };
    const answeredAt = promptStep.atMs + promptStep.ms;
    const late = (report.updates as unknown as Array<{ step: string; atMs: number }>).filter((entry) => entry.step === (promptStep as { step: string }).step && entry.atMs > answeredAt);
    expect(late).to.deep.equal([]);
    expect((report.summary.afterCancel as { stopReason: string }).stopReason).to.equal('end_turn');
  });

  it('errors: the right codes, and the agent keeps serving', async () => {
    const report = await drive('errors');
    expect(report.ok).to.equal(true);
    const codes = report.summary.codes as Record<string, number>;
    expect(codes.prompt_before_initialize).to.equal(-32600);
    expect(codes.unknown_method).to.equal(-32601);
    expect(codes.invalid_params).to.equal(-32602);
    expect(codes.unknown_session).to.equal(-32002);
    expect(codes.relative_cwd).to.equal(-32602);
    expect(report.summary.aliveAfterErrors).to.equal(true);
  });
});
