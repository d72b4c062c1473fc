#!/usr/bin/env node
// The soak's agent CLI: spec/support/fake-claude.mjs with the transcript chosen per session.
// warden gives every session's CLI the same environment, so the fixture (FAKE_CLAUDE_FIXTURE)
// comes from the file `.soak-fixture` in the session's working directory when there is one:
// the soak mixes sessions with and without permission requests under one warden.
import { readFileSync } from 'node:fs';

try {
  const fixture = readFileSync('.soak-fixture', 'utf8').trim();
  if (fixture) process.env.FAKE_CLAUDE_FIXTURE = fixture;
} catch {
  // no file: the environment's fixture
}
await import('../../spec/support/fake-claude.mjs');
