import { expect } from 'chai';
import type { HostEvent } from '../../src/host/host.js';
import { logEntryOf } from '../../src/host/host-log.js';
import { createLogSink } from '../../src/inspect/log-sink.js';

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
});
