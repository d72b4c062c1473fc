// Faults a fake CLI commits on request, so that chaos tests can make a real process misbehave
// through real pipes (not by injecting into warden's side). On SIGUSR2 the fake reads the
// file `.fake-fault` in its working directory (each session has its own) and does what it
// names:
//   garbage      prints a line that is not JSON
//   half         prints half a JSON line with no newline: the next real line is glued to it
//   huge         prints one line of 2 MiB (over the limit when warden runs with --max-line-mib 1,
//                as the soak does; under the 64 MiB default it is read, and ignored as noise)
//   close-stdin  closes its stdin and stays alive: the host's next write fails with EPIPE
//   spin         100% CPU and silent from now on: a busy loop that never yields (the hang watchdog's)
//   leak [MB]    keeps and touches 100 MB a second (or MB, when given) from now on (Claude Code's
//                memory leak): warden's memory limits must recycle or kill it
// At start, a file `.fake-crash-loop` in its working directory makes it kill -9 itself at once
// (a crash loop, per session).
import { closeSync, existsSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

function writeAll(text) {
  const buffer = Buffer.from(text);
  let offset = 0;
  while (offset < buffer.length) offset += writeSync(1, buffer, offset);
}

/** Kills this process at once when its working directory asks for a crash loop. */
export function crashWhenAsked() {
  if (existsSync(join(process.cwd(), '.fake-crash-loop'))) process.kill(process.pid, 'SIGKILL');
}

/**
 * Installs the SIGUSR2 handler. `state.stdinClosed` turns true after `close-stdin`, so the
 * fake can tell its own closing from an EOF sent by the host.
 */
export function installFaultSignal() {
  const state = { stdinClosed: false };
  process.on('SIGUSR2', () => {
    let fault = '';
    try {
      fault = readFileSync(join(process.cwd(), '.fake-fault'), 'utf8').trim();
    } catch {
      return;
    }
    if (fault === 'garbage') writeAll('this is not JSON {{{\n');
    else if (fault === 'half') writeAll('{"type":"assistant","message":{"id":"msg_half","content":[{"type":"te');
    else if (fault === 'huge') writeAll(`{"type":"noise","pad":"${'x'.repeat(2 * 1024 * 1024)}"}\n`);
    else if (fault === 'spin') {
      for (;;) Math.sqrt(Math.random());
    } else if (fault === 'leak' || fault.startsWith('leak ')) {
      const perSecond = Number(fault.slice(5)) || 100;
      const kept = [];
      setInterval(() => kept.push(Buffer.alloc((perSecond * 1024 * 1024) / 10, 1)), 100).unref();
    } else if (fault === 'close-stdin') {
      state.stdinClosed = true;
      process.stdin.destroy();
      // destroy() leaves fd 0 open (Node never closes stdio fds): close it, so the host's
      // next write really meets EPIPE.
      try {
        closeSync(0);
      } catch {
        // already closed
      }
      // Nothing else keeps the event loop alive now: without this it would exit (code 13).
      setInterval(() => undefined, 1 << 30);
    }
  });
  return state;
}

/** Never resolves: a fake whose stdin it closed itself lives on, silent, until killed. */
export function liveOn() {
  setInterval(() => undefined, 1 << 30);
  return new Promise(() => undefined);
}
