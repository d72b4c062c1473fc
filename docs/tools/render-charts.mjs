#!/usr/bin/env node
// Renders the state charts of `warden inspect --export mermaid` to PNG images for
// docs/inspect.md, in Debian's headless Chromium, with Mermaid loaded from a local install
// (nothing is fetched). Not part of the build or the tests: Mermaid is large (150 MB).
//
//   npm install --prefix /tmp/mm mermaid@11
//   MERMAID=/tmp/mm/node_modules/mermaid/dist/mermaid.min.js node --import tsx docs/tools/render-charts.mjs
import { writeFileSync, mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { chartNamed } from '../../src/inspect/chart-catalog.ts';
import { toMermaid } from '../../src/inspect/chart-mermaid.ts';

const mermaid = process.env.MERMAID;
if (!mermaid) throw new Error('set MERMAID to the path of mermaid.min.js (see the comment at the top)');
const out = new URL('../images/', import.meta.url);
mkdirSync(out, { recursive: true });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
try {
  for (const name of ['session', 'port', 'pending-request', 'supervisor']) {
    const chart = chartNamed(name);
    if (!chart) throw new Error(`no chart ${name}`);
    const page = await browser.newPage({ deviceScaleFactor: 2 });
    await page.setContent('<!doctype html><html><body style="margin:0;background:#fff"><pre class="mermaid"></pre></body></html>');
    await page.addScriptTag({ path: mermaid });
    await page.evaluate(async (source) => {
      const pre = document.querySelector('pre.mermaid');
      pre.textContent = source;
      globalThis.mermaid.initialize({ startOnLoad: false, theme: 'neutral' });
      await globalThis.mermaid.run({ nodes: [pre] });
    }, toMermaid(chart));
    const svg = await page.$('pre.mermaid svg');
    const file = new URL(`chart-${name}.png`, out);
    writeFileSync(file, await svg.screenshot());
    console.error(`wrote ${file.pathname}`);
    await page.close();
  }
} finally {
  await browser.close();
}
