/**
 * The live view end to end in a real headless Chromium (Debian's `chromium`, driven by
 * playwright-core): a host with the demo agent as a real subprocess serves its view; the page
 * shows the tree with the agent's pid and the session's state highlighted on its chart; a
 * kill -9 of the agent process shows up on the page as a restart (count 1, the new pid, the
 * exit and restart on the timeline). The page asks for nothing but the view's own address.
 * A session's owner host and epoch (a store several hosts share) are shown from a view fed by
 * hand; a SQLite host's session shows none.
 *
 * Skipped, saying so, where /usr/bin/chromium is missing (.ci/run installs it as root).
 * LIVE_VIEW_SCREENSHOT=docs/images/live-view.png writes the screenshot the docs show.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createMachine } from 'xstate';
import { createHost, type Host } from '../../src/runtime/host.js';
import { allCharts, chartNamed } from '../../src/inspect/chart-catalog.js';
import { chartSvg } from '../../src/inspect/chart-svg.js';
import { chartEdges, chartStates, type Chart } from '../../src/inspect/chart-model.js';
import { createLiveViewModel } from '../../src/inspect/live-view-model.js';
import { serveLiveView, type LiveViewServer } from '../../src/inspect/live-view-server.js';
import { sessionMachine } from '../../src/session/session-machine.js';
import { isAlive, waitUntil } from '../support/processes.js';

const CHROMIUM = '/usr/bin/chromium';

/** Run in the page (this project's TypeScript has no DOM types): the texts of a drawn chart that spill out of their box. */
const OVERFLOWS = `(() => {
  const out = [];
  const inside = (inner, outer) => inner.left >= outer.left - 1 && inner.right <= outer.right + 1 && inner.top >= outer.top - 1 && inner.bottom <= outer.bottom + 1;
  for (const group of document.querySelectorAll('g.state, g.any')) {
    const rect = group.querySelector(':scope > rect.box');
    for (const text of group.querySelectorAll(':scope > text')) {
      if (!inside(text.getBoundingClientRect(), rect.getBoundingClientRect())) out.push(group.getAttribute('data-path') + ': ' + text.textContent);
    }
  }
  for (const group of document.querySelectorAll('g.transition')) {
    const background = group.querySelector(':scope > rect.label-bg');
    const text = group.querySelector(':scope > text.label');
    if (background && text && !inside(text.getBoundingClientRect(), background.getBoundingClientRect())) out.push('label ' + group.getAttribute('data-label'));
  }
  return out;
})()`;

describe('live view in Chromium', function () {
  this.timeout(180_000);
  let dir: string;
  let host: Host | undefined;
  let view: LiveViewServer | undefined;
  let browser: Browser | undefined;

  before(function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`      skipped: ${CHROMIUM} is missing (apt-get install chromium; .ci/run does it as root)`);
      this.skip();
    }
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-live-view-'));
  });

  afterEach(async () => {
    await browser?.close();
    browser = undefined;
    await view?.close();
    view = undefined;
    await host?.stop();
    host = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Waits for `selector` on the page, with a deadline that names what was awaited. */
  const shown = async (page: Page, selector: string, what: string) => {
    try {
      await page.waitForSelector(selector, { timeout: 30_000 });
    } catch {
      throw new Error(`the page did not show ${what} (${selector}) within 30 s`);
    }
  };

  it('shows the tree, the session highlighted on its chart, a kill -9 of the agent as a restart, and the requests a permission holds up', async () => {
    // The permission policy holds the demo agent's tool call until the test lets it go.
    let asked!: () => void;
    const permissionAsked = new Promise<void>((resolve) => (asked = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    host = createHost({
      store: ':memory:',
      agentOptions: { env: { DEMO_WORD_DELAY_MS: '1' } },
      permission: async () => {
        asked();
        await released;
        return { outcome: 'selected', optionId: 'allow' };
      },
    });
    const session = await host.newSession({ cwd: dir });
    expect((await session.prompt('hello').result).stopReason).to.equal('end_turn');
    const first = host.processes()[0];
    if (!first) throw new Error('the demo agent has no process');

    view = await host.inspect.serve();
    expect(view.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/u);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const fetched: string[] = [];
    page.on('request', (request) => fetched.push(request.url()));
    await page.goto(view.url);

    // The tree: the agent process with its pid, running, never restarted; its supervisor.
    await shown(page, `li[data-kind="port"][data-pid="${first.pid}"][data-status="active"][data-restarts="0"]`, `the agent process ${first.pid}`);
    await shown(page, 'li[data-kind="supervisor"][data-label="agent"]', 'the agent supervisor');
    await shown(page, '[data-testid="connection"][data-state="live"]', 'the live connection');
    // The session's state chart drawn as a graph (laid out in the page by the elkjs warden
    // serves): one box per state, one labelled arrow per transition, the current state highlighted.
    const machine = `[data-testid="machine"][data-session="${session.sessionId}"]`;
    const graph = `${machine} [data-testid="graph"] svg.chart-graph`;
    await shown(page, `${graph} g.state.current[data-path="ready"]`, 'the session highlighted in ready on its graph');
    const chart = chartNamed('session') as Chart;
    const states = chartStates(chart).map((entry) => entry.path);
    expect(await page.locator(`${graph} g.state`).evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-path')))).to.have.members(states);
    for (const name of states) expect(await page.locator(`${graph} g.state[data-path="${name}"] > text.name`).textContent()).to.equal(name);
    const arrows = chartEdges(chart).filter((edge) => edge.transition.targets.length > 0).length;
    expect(await page.locator(`${graph} g.transition`).count()).to.equal(arrows);
    expect(await page.locator(`${graph} g.transition[data-event="prompt"][data-source="ready"][data-target="prompting"] > text.label`).textContent()).to.equal('prompt');
    expect(await page.locator(`${graph} g.state.current`).count()).to.equal(1);
    // The view was served after the prompt: the transition taken last (back to ready) is lit at once.
    await shown(page, `${graph} g.transition.last[data-event="prompt.settled"][data-source="prompting"][data-target="ready"]`, 'the transition taken before the view was served lit');
    expect(await page.locator(`${graph} g.transition.last`).count()).to.equal(1);
    // A SQLite store has no owners: the session names none.
    expect(await page.locator(`${machine} [data-testid="owner"]`).count()).to.equal(0);

    // The agent process and its supervisor drawn on their declared charts, as the session is.
    const portGraph = '[data-testid="machine"][data-kind="port"] [data-testid="graph"] svg.chart-graph';
    await shown(page, `${portGraph} g.state.current[data-path="running"]`, 'the agent process running on the port chart');
    await shown(page, '[data-testid="machine"][data-kind="supervisor"][data-label="agent"] [data-testid="graph"] svg.chart-graph g.state.current[data-path="running"]', 'the agent supervisor running on its chart');
    expect(await page.locator(`${portGraph} g.state`).evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-path')))).to.have.members(['starting', 'running', 'stopping', 'exited']);

    process.kill(first.pid, 'SIGKILL');
    await waitUntil(() => host!.processes().some((entry) => entry.pid !== first.pid) && session.state() === 'ready', 'the agent process to be restarted', 30_000);
    const second = host.processes()[0];
    if (!second) throw new Error('no agent process after the restart');

    // The restart on the page: the new process, counted; the old one's exit and the restart on the timeline.
    await shown(page, `li[data-kind="port"][data-pid="${second.pid}"][data-status="active"][data-restarts="1"]`, `the restarted agent process ${second.pid}`);
    expect(await page.locator(`li[data-kind="port"][data-pid="${first.pid}"]`).count()).to.equal(0);
    // The new agent process on its chart, seen from its start: in running by port.internal.spawned.
    await shown(page, `${portGraph} g.transition.last[data-event="port.internal.spawned"][data-target="running"]`, 'the new agent process\'s spawn lit on the port chart');
    await shown(page, `#timeline li[data-kind="restart"]:has-text("pid ${second.pid}"):has-text("restart 1")`, 'the port\'s restart on the timeline');
    await shown(page, '#timeline li[data-kind="exit"]:has-text("port"):has-text("SIGKILL")', 'the killed port\'s exit on the timeline');
    await shown(page, '#timeline li[data-kind="session"]:has-text("recovered after restart 1")', 'the session\'s recovery on the timeline');
    // The session is back in the state the host says, highlighted; it came back from recovering.
    await shown(page, `${graph} g.state.current[data-path="${session.state()}"]`, `the session highlighted in ${session.state()}`);
    await shown(page, `${graph} g.transition.last[data-source="recovering"]`, 'the way out of recovering highlighted');
    expect(await page.locator(`${graph} g.transition.last`).count()).to.equal(1);

    // A prompt held up by a permission: the session awaits it, the requests wait with it.
    const run = session.prompt('please run the tool');
    await permissionAsked;
    await shown(page, `${graph} g.state.current[data-path="awaitingPermission"]`, 'the session highlighted in awaitingPermission');
    await shown(page, `${graph} g.transition.last[data-event="permission.asked"][data-source="prompting"][data-target="awaitingPermission"]`, 'the transition prompting → awaitingPermission highlighted');
    expect(await page.locator(`${graph} g.state.current`).count()).to.equal(1);
    expect(await page.locator(`${graph} g.state.current[data-path="ready"]`).count()).to.equal(0);
    await shown(page, '[data-testid="pending-request"][data-method="session/request_permission"]', 'the pending permission request');
    await shown(page, '[data-testid="pending-request"][data-method="session/prompt"]', 'the pending prompt');
    if (process.env.LIVE_VIEW_SCREENSHOT) {
      await page.waitForTimeout(1500); // let the ages tick past 0 s for the picture
      mkdirSync(dirname(process.env.LIVE_VIEW_SCREENSHOT), { recursive: true });
      await page.screenshot({ path: process.env.LIVE_VIEW_SCREENSHOT, fullPage: true });
    }
    release();
    expect((await run.result).stopReason).to.equal('end_turn');
    await shown(page, `${graph} g.state.current[data-path="ready"]`, 'the session ready after its prompt');
    await shown(page, `${graph} g.transition.last[data-event="prompt.settled"][data-target="ready"]`, 'the transition back to ready highlighted');
    await shown(page, '#pending:not(:has([data-testid="pending-request"]))', 'no pending request once answered');
    // Nothing but the view itself was asked for: no CDN, no font, no analytics.
    expect(fetched.length).to.be.greaterThan(2);
    expect(fetched.filter((url) => !url.startsWith(view!.url))).to.deep.equal([]);

    await browser.close();
    browser = undefined;
    await view.close();
    view = undefined;
    await host.stop();
    host = undefined;
    expect(isAlive(second.pid)).to.equal(false);
  });

  it('follows machines fed event by event: a restart lights recovering, nested and parallel states drawn nested, the highlight moving', async () => {
    // A model fed by hand, as a relayed stream would feed it: the charts come from the definitions.
    const model = createLiveViewModel();
    const nested = createMachine({
      id: 'nested', initial: 'idle',
      states: {
        idle: { on: { go: 'working' } },
        working: { type: 'parallel', states: { fetch: { initial: 'waiting', states: { waiting: { on: { data: 'got' } }, got: {} } }, log: { initial: 'quiet', states: { quiet: {} } } } },
      },
    });
    const actorEvent = (sessionId: string, name: string, config: unknown) => ({ type: '@xstate.actor', sessionId, name, createdAt: String(Date.now()), definition: JSON.stringify(config), snapshot: { status: 'active' } });
    const moved = (sessionId: string, value: unknown, event: string, context: Record<string, unknown> = {}) => ({ type: '@xstate.snapshot', sessionId, createdAt: String(Date.now()), snapshot: { status: 'active', value, context }, event: { type: event } });
    model.open('s', 'stream 1');
    model.apply('s', actorEvent('x:1', 'session', sessionMachine.config));
    model.apply('s', moved('x:1', 'ready', 'ready', { sessionId: 'demo-1' }));
    model.apply('s', actorEvent('x:2', 'nested', nested.config));
    model.apply('s', moved('x:2', 'idle', 'xstate.init'));
    view = await serveLiveView({ model, pushIntervalMs: 20 });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.goto(view.url);
    const session = '[data-testid="machine"][data-session="demo-1"] svg.chart-graph';
    const other = '[data-testid="machine"][data-state^="idle"] svg.chart-graph, [data-testid="machine"][data-state^="working"] svg.chart-graph';
    await shown(page, `${session} g.state.current[data-path="ready"]`, 'the session in ready');

    // The agent ends: the session goes to recovering by agent.restarting, from any state.
    model.apply('s', moved('x:1', 'recovering', 'agent.restarting', { sessionId: 'demo-1' }));
    await shown(page, `${session} g.state.current[data-path="recovering"]`, 'recovering lit');
    await shown(page, `${session} g.transition.last[data-source=""][data-event="agent.restarting"][data-target="recovering"]`, 'agent.restarting from any state lit');
    expect(await page.locator(`${session} g.state.current`).count()).to.equal(1);
    await shown(page, '[data-testid="machine"][data-session="demo-1"] [data-testid="last-transition"]:has-text("ready → recovering on agent.restarting")', 'the last transition named');
    model.apply('s', moved('x:1', 'ready', 'agent.recovered', { sessionId: 'demo-1' }));
    await shown(page, `${session} g.transition.last[data-source="recovering"][data-event="agent.recovered"][data-target="ready"]`, 'agent.recovered lit');
    expect(await page.locator(`${session} g.state.current[data-path="recovering"]`).count()).to.equal(0);

    // On a store several hosts share: the owner host and its epoch, then where the session went.
    const title = '[data-testid="machine"][data-session="demo-1"] .machine-title';
    model.apply('s', moved('x:1', 'ready', 'owner.changed', { sessionId: 'demo-1', owner: { hostId: '3f2a9c1d-7e55-4a1b-9c0d-2b8e4f6a1c3e', hostName: 'box-a', epoch: 1, here: true } }));
    await shown(page, `${title} [data-testid="owner"][data-owner-here="true"][data-owner-epoch="1"][data-owner-host="3f2a9c1d-7e55-4a1b-9c0d-2b8e4f6a1c3e"]`, 'the owner host and epoch');
    expect(await page.locator(`${title} [data-testid="owner"]`).textContent()).to.equal('owner box-a 3f2a9c1d \u00b7 epoch 1');
    model.apply('s', moved('x:1', 'ready', 'owner.changed', { sessionId: 'demo-1', owner: { hostId: 'b7c41d09-1111-4222-8333-944455556666', epoch: 2, here: false } }));
    await shown(page, `${title} [data-testid="owner"].moved[data-owner-here="false"][data-owner-epoch="2"]`, 'the session moved to another host');
    expect(await page.locator(`${title} [data-testid="owner"]`).textContent()).to.equal('moved to b7c41d09 \u00b7 epoch 2');
    expect(await page.locator(`${title} [data-testid="owner"]`).getAttribute('title')).to.equal('moved to host b7c41d09-1111-4222-8333-944455556666, epoch 2');

    // Nested and parallel: the regions inside their parallel state, both leaves current at once.
    await shown(page, `:is(${other}) g.state.parallel[data-path="working"] > g.state.region[data-path="working.fetch"] > g.state[data-path="working.fetch.waiting"]`, 'working.fetch.waiting inside its region inside working');
    model.apply('s', moved('x:2', { working: { fetch: 'waiting', log: 'quiet' } }, 'go'));
    await shown(page, `:is(${other}) g.state.current[data-path="working.log.quiet"]`, 'working.log.quiet current');
    expect(await page.locator(`:is(${other}) g.state.current`).evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-path')))).to.have.members(['working.fetch.waiting', 'working.log.quiet']);
    expect(await page.locator(`:is(${other}) g.state.active[data-path="working"]:not(.current)`).count()).to.equal(1);
    await shown(page, `:is(${other}) g.transition.last[data-event="go"][data-source="idle"][data-target="working"]`, 'go lit');
    model.apply('s', moved('x:2', { working: { fetch: 'got', log: 'quiet' } }, 'data'));
    await shown(page, `:is(${other}) g.transition.last[data-event="data"][data-target="working.fetch.got"]`, 'data lit');
    expect(await page.locator(`:is(${other}) g.transition.last`).count()).to.equal(1);
    expect(await page.locator(`:is(${other}) g.state.current`).evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-path')))).to.have.members(['working.fetch.got', 'working.log.quiet']);
  });

  it('draws the exported SVG of every chart with each name inside its box and each label on its background (CHART_SCREENSHOTS=DIR writes DIR/chart-NAME.png)', async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    const pictured = new Set(['session', 'port', 'pending-request', 'supervisor']);
    for (const chart of allCharts()) {
      const svg = await chartSvg(chart, { active: [chart.initial] });
      await page.setContent(`<!doctype html><html><body style="margin:0">${svg.replace(/^<\?xml[^>]*>\n/u, '')}</body></html>`);
      // Text measured in Node (a monospace font of fixed advance) fits where Chromium draws it.
      const overflows = (await page.evaluate(OVERFLOWS)) as string[];
      expect(overflows, chart.name).to.deep.equal([]);
      expect(await page.locator('svg.chart-graph g.state').count(), chart.name).to.equal(chartStates(chart).length);
      const dir = process.env.CHART_SCREENSHOTS;
      if (dir && pictured.has(chart.name)) {
        mkdirSync(dir, { recursive: true });
        await page.locator('svg.chart-graph').screenshot({ path: join(dir, `chart-${chart.name}.png`) });
      }
    }
  });

  it('shows a supervisor giving up (restart intensity 0) as an escalation, and the session failed', async () => {
    host = createHost({ store: ':memory:', supervision: { intensity: 0, period: 60_000 }, agentOptions: { env: { DEMO_WORD_DELAY_MS: '1' } } });
    const session = await host.newSession({ cwd: dir });
    expect((await session.prompt('hello').result).stopReason).to.equal('end_turn');
    const agent = host.processes()[0];
    if (!agent) throw new Error('the demo agent has no process');
    view = await host.inspect.serve();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    const page = await browser.newPage();
    await page.goto(view.url);
    await shown(page, `li[data-kind="port"][data-pid="${agent.pid}"]`, `the agent process ${agent.pid}`);

    process.kill(agent.pid, 'SIGKILL');
    await shown(page, '#timeline li[data-kind="escalation"]:has-text("restart intensity exceeded")', 'the escalation on the timeline');
    await shown(page, '#timeline li[data-kind="session"]:has-text("failed")', 'the session\'s failure on the timeline');
    const machine = `[data-testid="machine"][data-session="${session.sessionId}"]`;
    await shown(page, `${machine}[data-status="done"] svg.chart-graph g.state.current.final[data-path="failed"]`, 'the session highlighted in its final state failed');
    await shown(page, `${machine} svg.chart-graph g.transition.last[data-event="agent.failed"][data-target="failed"]`, 'the transition into failed highlighted');
    expect(session.state()).to.equal('failed');
  });
});
