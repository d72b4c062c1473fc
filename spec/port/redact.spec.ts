import { expect } from 'chai';
import { redactorFor, redactSecrets, secretValuesOf } from '../../src/port/redact.js';
import { PortError } from '../../src/port/port-exit.js';
import { StderrRing } from '../../src/port/stderr-ring.js';
import type { HostEvent } from '../../src/runtime/host.js';
import { inspectionPayload } from '../../src/inspect/inspection-payload.js';
import { createLogSink } from '../../src/inspect/log-sink.js';

const key = 'Zq8vL2mN4pR7sT1uW3xY5a';

describe('secret redaction (issue 14)', () => {
  describe('by value: what the environment holds, wherever it sits in a line', () => {
    const cases: Array<[string, string]> = [
      [`401 for ANTHROPIC_API_KEY=${key} (source: env)`, '401 for ANTHROPIC_API_KEY=[redacted] (source: env)'],
      [`retry with x-api-key ${key} now`, 'retry with x-api-key [redacted] now'],
      [`prefix${key}suffix`, 'prefix[redacted]suffix'],
      [`${key} ${key}`, '[redacted] [redacted]'],
    ];
    for (const [text, expected] of cases) {
      it(JSON.stringify(text.replaceAll(key, '<key>')), () => expect(redactSecrets(text, [key])).to.equal(expected));
    }

    it('takes the values of secret-named variables only, long enough to be keys, the longest first', () => {
      const values = secretValuesOf({ ANTHROPIC_API_KEY: key, MY_SERVICE_TOKEN: `${key}-long`, HOME: '/home/someone-long', DEBUG_PASSWORD: 'short', CLAUDE_CODE_USE_BEDROCK: '1' });
      expect(values).to.deep.equal([`${key}-long`, key]);
    });
  });

  describe('by shape: keys warden never saw', () => {
    const cases: Array<[string, string]> = [
      ['using sk-ant-api03-abcdefghijklmnop from ~/.claude', 'using [redacted] from ~/.claude'],
      ['key sk-proj-abcdefgh1234 rejected', 'key [redacted] rejected'],
      ['header Authorization: Bearer abcdefgh.ijkl-mnop', 'header Authorization: [redacted]'],
      ['sent Bearer abcdefghijklmnop', 'sent Bearer [redacted]'],
      ['{"api_key": "abcdefgh12345", "other": 1}', '{"api_key": "[redacted]", "other": 1}'],
      ['https://h.example/cb?access_token=abc123&state=ok', 'https://h.example/cb?access_token=[redacted]&state=ok'],
      ['password: hunter2 and GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwx', 'password: [redacted] and GITHUB_TOKEN=[redacted]'],
    ];
    for (const [text, expected] of cases) {
      it(JSON.stringify(text), () => expect(redactSecrets(text)).to.equal(expected));
    }

    describe('issue 14 review: URLs with a password, quoted values, flags, more key shapes', () => {
      const more: Array<[string, string]> = [
        ['proxy https://alice:hunter2hunter2@proxy.example:8080/x refused', 'proxy https://alice:[redacted]@proxy.example:8080/x refused'],
        ['via http://u:p@ss@proxy:1 (an unescaped @ in the password)', 'via http://u:[redacted]@proxy:1 (an unescaped @ in the password)'],
        ['{"api_key": "abc def ghi jkl", "other": 1}', '{"api_key": "[redacted]", "other": 1}'],
        ['{"token": "abc \\"def\\" ghi", "n": 2}', '{"token": "[redacted]", "n": 2}'],
        ["password: 'two words'", "password: '[redacted]'"],
        ['token: "cut before its end', 'token: "[redacted]'],
        ['my-agent --api-key abcdefghijklmnop --token "a b c" --password hunter2, ok', 'my-agent --api-key [redacted] --token "[redacted]" --password [redacted], ok'],
        ['--api-key sk-ant-api03-abcdefghijklmnop end', '--api-key [redacted] end'],
        ['error: invalid x-api-key sk_live_51HabcdefghijklmnopQRSTU', 'error: invalid x-api-key [redacted]'],
        ['keys rk_test_abcdefghij12 AKIAIOSFODNN7EXAMPLE glpat-abcdefghij0123456789', 'keys [redacted] [redacted] [redacted]'],
        ['jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig here', 'jwt [redacted] here'],
        ['cb?password%3Dhunter2hunter2&x=1', 'cb?password%3D[redacted]&x=1'],
      ];
      for (const [text, expected] of more) {
        it(JSON.stringify(text), () => expect(redactSecrets(text)).to.equal(expected));
      }

      it('leaves prose about a flag, a next flag, token counts and URLs without a password', () => {
        const text = 'Missing --api-key or set ANTHROPIC_API_KEY. Pass --api-key explicitly. --token --verbose --max-tokens 4096 http://proxy.corp:3128 ssh://git@github.com';
        expect(redactSecrets(text)).to.equal(text);
      });

      it('is idempotent on each of them', () => {
        for (const [text] of more) {
          const once = redactSecrets(text);
          expect(redactSecrets(once)).to.equal(once);
        }
      });

      it('a proxy variable with a password gives its address and password as secret values; one without gives nothing', () => {
        const values = secretValuesOf({ HTTPS_PROXY: 'http://alice:p%40ssw0rd123@proxy:8080', HTTP_PROXY: 'http://proxy.corp:3128', NO_PROXY: 'localhost,127.0.0.1', all_proxy: 'socks5://tok1234567890@h:1' });
        expect(values).to.have.members(['http://alice:p%40ssw0rd123@proxy:8080', 'p%40ssw0rd123', 'p@ssw0rd123', 'socks5://tok1234567890@h:1', 'tok1234567890']);
        const ring = new StderrRing(1024, redactorFor({ HTTPS_PROXY: 'http://alice:p%40ssw0rd123@proxy:8080' }));
        ring.push(Buffer.from('proxy auth failed for alice with p@ssw0rd123 at proxy:8080\n'));
        expect(ring.tail()).to.equal('proxy auth failed for alice with [redacted] at proxy:8080');
      });
    });

    it('leaves what only looks close: task-… ids, token counts, session ids', () => {
      const text = 'task-abcdefghijklmnop max_tokens=4096 input_tokens: 12 session 3f14e166-314b-4cc3-b08e-882eb52c9a8d';
      expect(redactSecrets(text)).to.equal(text);
    });

    it('is idempotent', () => {
      const once = redactSecrets(`token=${key} Bearer ${key}`, [key]);
      expect(redactSecrets(once, [key])).to.equal(once);
    });
  });

  describe('the stderr ring a port keeps', () => {
    it('gives its tail redacted with the child\'s values', () => {
      const ring = new StderrRing(1024, redactorFor({ ANTHROPIC_API_KEY: key, PATH: '/bin' }));
      ring.push(Buffer.from(`[api] failed for ${key.slice(0, 7)}`));
      ring.push(Buffer.from(`${key.slice(7)} (env)\n`));
      expect(ring.tail()).to.equal('[api] failed for [redacted] (env)');
    });

    it('starts at a line once the front was dropped: the end of a cut key is not kept', () => {
      const ring = new StderrRing(40, redactorFor({ ANTHROPIC_API_KEY: key }));
      ring.push(Buffer.from(`key=${key.slice(0, 10)}`));
      ring.push(Buffer.from(`${key.slice(10)} end\nnext line\n`));
      ring.push(Buffer.from('last line\n'));
      // The first chunk was dropped: what is left of the key no longer reads as it.
      expect(ring.tail()).to.equal('next line\nlast line');
      expect(ring.tail()).to.not.contain(key.slice(10));
    });
  });

  it('a PortError does not repeat a key given on the command line', () => {
    const error = new PortError({ reason: { kind: 'exited', code: 1 }, command: ['my-agent', '--api-key', 'sk-ant-api03-abcdefghijklmnop', '--token=abcdefghij'], pid: 1, durationMs: 5, stderrTail: '', linesIn: 0, nonJsonLines: 0 });
    expect(error.message).to.equal('Agent process failed with exit code 1: my-agent --api-key [redacted] --token=[redacted]');
  });

  it('log lines: a key in an event (an exit with its command line, an error message) is redacted, JSON or pretty', () => {
    const lines: string[] = [];
    const exit: HostEvent = { type: 'session.failed', sessionId: 's1', reason: 'error: PortError: Agent process failed: my-agent ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop' };
    for (const format of ['json', 'pretty'] as const) createLogSink({ format, level: 'debug', write: (line) => lines.push(line) })(exit);
    expect(lines).to.have.length(2);
    for (const line of lines) expect(line).to.contain('ANTHROPIC_API_KEY=[redacted]').and.not.contain('abcdefghijk');
  });

  it('inspection payloads: a key inside a longer string is redacted, the rest kept, also across the cut', () => {
    const copy = inspectionPayload({ message: 'Agent process failed with exit code 1\nANTHROPIC_API_KEY=sk-ant-api03-abcdefghijk missing', long: `${'x'.repeat(95)}sk-ant-api03-abcdefghijklmnop` }, { maxString: 100 }) as Record<string, string>;
    expect(copy.message).to.equal('Agent process failed with exit code 1\nANTHROPIC_API_KEY=[redacted] missing');
    expect(copy.long).to.not.contain('sk-ant').and.to.not.contain('abcdefghijk');
  });
});
