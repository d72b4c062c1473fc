/**
 * Secrets a CLI prints never leave warden (issue 14, "Injection and secrets"): `warden acp
 * --agent claude --inspect ws://…`, the fake `claude` found by name on the PATH, which
 * prints its API key (from warden's environment) and a token given with `--env` inside
 * longer stderr lines and dies mid-turn. The JSON-RPC error the editor gets carries the
 * stderr tail with both redacted and the rest of the lines intact; the inspector stream
 * (a WebSocket server on 127.0.0.1) and warden's own log carry no trace of either.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchWarden, pathWithFakeAgents, stopWardens } from '../support/acp-editor.js';
import { listenAsInspector, type InspectorListener } from '../support/inspector-listener.js';
import { isAlive, waitUntil } from '../support/processes.js';

/** A secret of no known shape (no `sk-` prefix): only its value can find it. */
const shapeless = () => `k${randomBytes(18).toString('base64url')}`;

/** Pieces of a secret long enough to identify it: the whole, its halves, its ends. */
const tracesOf = (secret: string) => [secret, secret.slice(0, 10), secret.slice(-10), secret.slice(5, 15)];

describe('warden acp: secrets in a CLI\'s stderr are redacted in error data, the inspector and the log', function () {
  this.timeout(60_000);
  let dir: string;
  let inspector: InspectorListener;
  let url: string;
  let frames: string[];

  beforeEach(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-redaction-')));
    inspector = await listenAsInspector();
    ({ url, frames } = inspector);
  });

  afterEach(async () => {
    await stopWardens();
    await inspector.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a CLI that prints ANTHROPIC_API_KEY and an --env token inside longer lines and dies: no trace of either in what the editor, the inspector or the log get', async () => {
    const apiKey = shapeless();
    const token = shapeless();
    const argvLog = join(dir, 'starts.ndjson');
    const warden = await launchWarden([
      '--agent', 'claude', '--on-crash', 'fail', '--store', ':memory:', '--inspect', url, '--log-level', 'debug',
      '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`,
      '--env', 'FAKE_CLAUDE_LEAK_VARS=ANTHROPIC_API_KEY,ACME_SERVICE_TOKEN', '--env', `ACME_SERVICE_TOKEN=${token}`,
    ], { PATH: pathWithFakeAgents(dir), ANTHROPIC_API_KEY: apiKey });
    const { sessionId } = await warden.request<{ sessionId: string }>('session/new', { cwd: dir, mcpServers: [] });
    const crashed = await warden.failure('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(crashed.code).to.equal(-32603);
    expect(crashed.data?.reason).to.equal('agent_crashed');
    // The tail is there and says what happened; only the secrets are gone.
    const tail = String(crashed.data?.stderrTail);
    expect(tail).to.contain('POST /v1/messages failed: 401 for ANTHROPIC_API_KEY=[redacted] (source: env)');
    expect(tail).to.contain('retry 1/1 with x-api-key [redacted] and header "Authorization: [redacted]"; config said token=[redacted],');
    expect(tail).to.contain('ACME_SERVICE_TOKEN=[redacted]');
    // The restarted CLI answers (it was started with --resume, so it does not leak again).
    await waitUntil(() => frames.some((frame) => frame.includes('port.exited')), 'the exit in the inspector stream', 20_000);
    const next = await warden.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(next.stopReason).to.equal('end_turn');
    expect(await warden.close()).to.equal(0);

    const editor = JSON.stringify(crashed);
    const inspector = frames.join('\n');
    expect(inspector, 'the inspector saw the crash').to.contain('[redacted]');
    for (const secret of [apiKey, token]) {
      for (const trace of tracesOf(secret)) {
        expect(editor, 'the error the editor got').to.not.contain(trace);
        expect(inspector, 'the inspector stream').to.not.contain(trace);
        expect(warden.stderr(), 'warden\'s log').to.not.contain(trace);
      }
    }
    for (const line of readFileSync(argvLog, 'utf8').trim().split('\n')) {
      const { pid } = JSON.parse(line) as { pid: number };
      await waitUntil(() => !isAlive(pid), `fake claude ${pid} to be gone`, 20_000);
    }
  });
  it('a CLI given HTTPS_PROXY with a password (a name that does not look secret) prints it and dies: no trace of the password in what the editor, the inspector or the log get', async () => {
    const password = shapeless();
    const proxy = `http://alice:${password}@proxy.invalid:3128`;
    const argvLog = join(dir, 'starts.ndjson');
    const warden = await launchWarden([
      '--agent', 'claude', '--on-crash', 'fail', '--store', ':memory:', '--inspect', url, '--log-level', 'debug',
      '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_LEAK_VARS=HTTPS_PROXY',
    ], { PATH: pathWithFakeAgents(dir), HTTPS_PROXY: proxy });
    const { sessionId } = await warden.request<{ sessionId: string }>('session/new', { cwd: dir, mcpServers: [] });
    const crashed = await warden.failure('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(crashed.data?.reason).to.equal('agent_crashed');
    const tail = String(crashed.data?.stderrTail);
    expect(tail).to.contain('POST /v1/messages failed: 401 for HTTPS_PROXY=[redacted] (source: env)');
    await waitUntil(() => frames.some((frame) => frame.includes('port.exited')), 'the exit in the inspector stream', 20_000);
    expect(await warden.close()).to.equal(0);
    for (const trace of tracesOf(password)) {
      expect(JSON.stringify(crashed), 'the error the editor got').to.not.contain(trace);
      expect(frames.join('\n'), 'the inspector stream').to.not.contain(trace);
      expect(warden.stderr(), 'warden\'s log').to.not.contain(trace);
    }
    for (const line of readFileSync(argvLog, 'utf8').trim().split('\n')) {
      const { pid } = JSON.parse(line) as { pid: number };
      await waitUntil(() => !isAlive(pid), `fake claude ${pid} to be gone`, 20_000);
    }
  });
});
