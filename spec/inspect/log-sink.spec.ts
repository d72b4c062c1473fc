import { expect } from 'chai';
import { mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostEvent } from '../../src/runtime/host.js';
import { logEntryOf } from '../../src/host/host-log.js';
import { createLogSink, logFileWriter } from '../../src/inspect/log-sink.js';

const at = () => new Date(Date.UTC(2026, 10, 30, 12, 3, 4, 567));
const restarting: HostEvent = { type: 'session.restarting', sessionId: 's1', restarts: 1, exit: 'Agent process was killed with SIGKILL' };
const state: HostEvent = { type: 'session.state', sessionId: 's1', state: 'prompting' };
const failed: HostEvent = { type: 'session.failed', sessionId: 's1', reason: 'intensity' };

describe('log sink', () => {
  it('json: one object per line with time, level, message and the event\'s own fields', () => {
    const lines: string[] = [];
    const sink = createLogSink({ format: 'json', level: 'info', write: (line) => lines.push(line), now: at });
    sink(restarting);
    expect(lines).to.have.length(1);
    expect(lines[0]?.endsWith('\n')).to.equal(true);
    expect(JSON.parse(lines[0] as string)).to.deep.equal({
      time: '2026-11-30T12:03:04.567Z',
      level: 'warn',
      message: 'session s1: agent process ended (Agent process was killed with SIGKILL); restart 1',
      type: 'session.restarting',
      sessionId: 's1',
      restarts: 1,
      exit: 'Agent process was killed with SIGKILL',
    });
  });

  it('pretty: time, level, message', () => {
    const lines: string[] = [];
    createLogSink({ format: 'pretty', level: 'debug', write: (line) => lines.push(line), now: at })(failed);
    expect(lines).to.deep.equal(['12:03:04.567 ERROR session s1 failed: intensity\n']);
  });

  it('writes only at or above its level', () => {
    const lines: string[] = [];
    const sink = createLogSink({ format: 'pretty', level: 'warn', write: (line) => lines.push(line), now: at });
    for (const event of [state, restarting, failed]) sink(event);
    expect(lines.map((line) => line.split(' ')[1])).to.deep.equal(['WARN', 'ERROR']);
  });

  it('a writer that throws loses the line, not the host', () => {
    const sink = createLogSink({ format: 'json', level: 'debug', write: () => { throw new Error('disk full'); } });
    expect(() => sink(failed)).not.to.throw();
  });

  it('every event type has a level and a sentence', () => {
    const events: HostEvent[] = [
      { type: 'session.opened', sessionId: 's', agent: 'demo', how: 'new' },
      state, restarting, failed,
      { type: 'session.recovered', sessionId: 's', restarts: 1 },
      { type: 'session.closed', sessionId: 's' },
      { type: 'journal.error', sessionId: 's', message: 'disk full' },
      { type: 'protocol.dropped', peer: 'editor', reason: 'unknown_notification', detail: 'x/y' },
    ];
    for (const event of events) {
      const entry = logEntryOf(event);
      expect(entry.message.length, event.type).to.be.greaterThan(5);
      expect(['debug', 'info', 'warn', 'error']).to.include(entry.level);
    }
  });
  describe('the log file writer', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'warden-log-file-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('holds the file open (0600): lines written after it was renamed away, as a log rotation does, still reach it, and none makes a new file', () => {
      const path = join(dir, 'warden.log');
      const write = logFileWriter(path);
      try {
        write('one\n');
        expect(statSync(path).mode & 0o777).to.equal(0o600);
        renameSync(path, join(dir, 'warden.log.1'));
        for (let i = 0; i < 1000; i++) write(`line ${i}\n`);
      } finally {
        write.close();
      }
      const lines = readFileSync(join(dir, 'warden.log.1'), 'utf8').split('\n');
      expect(lines.length).to.equal(1002);
      expect([lines[0], lines[1000]]).to.deep.equal(['one', 'line 999']);
      expect(() => statSync(path)).to.throw(/ENOENT/u);
    });

    it('a write that fails (/dev/full: ENOSPC) is reported once, naming the file; that line and the next go to the fallback; it never throws into the host', () => {
      const reports: string[] = [];
      const fallback: string[] = [];
      const write = logFileWriter('/dev/full', { fallback: (line) => fallback.push(line), report: (message) => reports.push(message) });
      const sink = createLogSink({ format: 'pretty', level: 'debug', write, now: at });
      expect(() => {
        sink(failed);
        sink(restarting);
        write('third\n');
      }).not.to.throw();
      write.close();
      expect(reports).to.have.length(1);
      expect(reports[0]).to.contain('/dev/full').and.to.contain('ENOSPC').and.to.contain('stderr');
      expect(fallback).to.deep.equal(['12:03:04.567 ERROR session s1 failed: intensity\n', '12:03:04.567 WARN  session s1: agent process ended (Agent process was killed with SIGKILL); restart 1\n', 'third\n']);
    });

    it('with no options, a failed write is reported and the line written on stderr, not thrown', () => {
      const write = logFileWriter('/dev/full');
      const written: string[] = [];
      const original = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stderr.write;
      try {
        expect(() => write('lost?\n')).not.to.throw();
      } finally {
        process.stderr.write = original;
        write.close();
      }
      expect(written).to.have.length(2);
      expect(written[0]).to.contain('cannot write the log file /dev/full');
      expect(written[1]).to.equal('lost?\n');
    });
  });
});
