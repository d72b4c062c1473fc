#!/usr/bin/env node
// A tiny CLI with its own line protocol, the kind of program an adapter wraps:
//   in:  {"say": "hello"}
//   out: {"word": "HELLO"} per word, then {"done": true}
// It exits on stdin EOF.
import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const { say } = JSON.parse(line);
  for (const word of String(say).split(/\s+/u).filter(Boolean)) {
    process.stdout.write(`${JSON.stringify({ word: word.toUpperCase() })}\n`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.stdout.write(`${JSON.stringify({ done: true })}\n`);
}
