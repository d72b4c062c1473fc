/**
 * The live view's page and its style sheet, shipped in the package as strings (the build
 * compiles them into dist/ like any module: no asset to copy, nothing fetched from a CDN).
 * The script that fills the page is live-view-script.ts; the charts' style is the one their
 * SVG export carries (chart-draw-script.ts).
 */
import { CHART_SVG_CSS } from './chart-draw-script.js';

/** The page; `title` is escaped. */
export function liveViewHtml(title: string): string {
  const safeTitle = title.replace(/[&<>"']/gu, (char) => `&#${char.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${safeTitle}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/live-view.css">
<script src="/elk.js" defer></script>
<script src="/live-view.js" defer></script>
</head>
<body>
<header>
  <h1>${safeTitle}</h1>
  <span id="connection" class="connection" data-testid="connection" data-state="connecting">connecting…</span>
  <span id="summary" class="summary" data-testid="summary"></span>
</header>
<main>
  <section class="panel tree-panel" aria-labelledby="tree-title">
    <h2 id="tree-title">Supervision tree</h2>
    <div id="tree" data-testid="tree"><p class="empty">Waiting for the first events…</p></div>
  </section>
  <section class="panel machines-panel" aria-labelledby="machines-title">
    <h2 id="machines-title">State charts <small>sessions, supervisors, agent processes: current state filled, last transition in blue</small></h2>
    <div id="machines" data-testid="machines"><p class="empty">No chart yet.</p></div>
  </section>
  <section class="panel pending-panel" aria-labelledby="pending-title">
    <h2 id="pending-title">Pending requests</h2>
    <table data-testid="pending">
      <thead><tr><th>method</th><th>id</th><th>on</th><th>age</th></tr></thead>
      <tbody id="pending"></tbody>
    </table>
  </section>
  <section class="panel timeline-panel" aria-labelledby="timeline-title">
    <h2 id="timeline-title">Timeline <small>newest first</small></h2>
    <ol id="timeline" data-testid="timeline"></ol>
  </section>
</main>
<footer>Served by acp-warden on this machine only; this page loads nothing from elsewhere.</footer>
</body>
</html>
`;
}

/** The style sheet (`/live-view.css`). */
export const LIVE_VIEW_CSS = `
:root {
  --bg: #f6f7f9; --panel: #ffffff; --ink: #1d2430; --muted: #667085; --line: #d9dee7;
  --ok: #1a7f37; --warn: #b35900; --bad: #c4262e; --info: #2459c9; --current: #ffd24d;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--ink); background: var(--bg);
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #12151b; --panel: #1b2029; --ink: #e3e8f0; --muted: #97a1b3; --line: #303847;
    --ok: #4cc26a; --warn: #f0a03c; --bad: #ff6b6b; --info: #79a3ff; --current: #8a6d00; }
}
* { box-sizing: border-box; }
body { margin: 0; }
header { display: flex; align-items: baseline; gap: 1rem; padding: .75rem 1.25rem; border-bottom: 1px solid var(--line); background: var(--panel); }
h1 { font-size: 1.15rem; margin: 0; }
h2 { font-size: .95rem; margin: 0 0 .5rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
h2 small { text-transform: none; letter-spacing: 0; font-weight: normal; }
.connection { font-size: .85rem; padding: .1rem .5rem; border-radius: 1rem; border: 1px solid var(--line); }
.connection[data-state="live"] { color: var(--ok); border-color: var(--ok); }
.connection[data-state="lost"] { color: var(--bad); border-color: var(--bad); }
.summary { color: var(--muted); font-size: .85rem; margin-left: auto; }
main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); grid-template-areas: "tree timeline" "pending timeline" "machines machines"; grid-template-rows: auto 1fr auto; gap: 1rem; padding: 1rem 1.25rem; }
.tree-panel { grid-area: tree; } .timeline-panel { grid-area: timeline; } .pending-panel { grid-area: pending; align-self: start; } .machines-panel { grid-area: machines; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; min-width: 0; }
.empty { color: var(--muted); margin: .25rem 0; }
footer { color: var(--muted); font-size: .8rem; padding: 0 1.25rem 1rem; }
@media (max-width: 900px) { main { grid-template-columns: minmax(0, 1fr); grid-template-areas: "tree" "machines" "pending" "timeline"; } }

/* The tree */
.source { margin-bottom: .75rem; }
.source-title { font-weight: 600; margin-bottom: .25rem; }
.source-title .muted { font-weight: normal; }
ul.tree { list-style: none; margin: 0; padding-left: 1.1rem; border-left: 1px dotted var(--line); }
.source > ul.tree { padding-left: 0; border-left: 0; }
.row { display: flex; flex-wrap: wrap; align-items: baseline; gap: .45rem; padding: .12rem 0; }
.dot { width: .6rem; height: .6rem; border-radius: 50%; background: var(--ok); display: inline-block; flex: none; align-self: center; }
.status-done > .row .dot, .status-stopped > .row .dot { background: var(--muted); }
.status-error > .row .dot { background: var(--bad); }
.status-done > .row, .status-stopped > .row, .status-error > .row { opacity: .6; }
.label { font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
.badge { font-size: .72rem; padding: 0 .35rem; border-radius: .25rem; border: 1px solid var(--line); color: var(--muted); }
.kind-port > .row .badge { color: var(--info); border-color: var(--info); }
.kind-supervisor > .row .badge { color: var(--ok); border-color: var(--ok); }
.kind-machine > .row .badge { color: var(--warn); border-color: var(--warn); }
.muted, .detail, .state, .uptime { color: var(--muted); font-size: .85rem; }
.pid { font-family: ui-monospace, monospace; font-size: .85rem; }
.restarts { font-size: .8rem; padding: 0 .35rem; border-radius: .25rem; background: var(--line); }
.restarts.hot { background: var(--warn); color: #fff; }
.owner { font-size: .8rem; padding: 0 .35rem; border-radius: .25rem; border: 1px solid var(--info); color: var(--info); font-family: ui-monospace, monospace; }
.owner.moved { border-color: var(--warn); color: var(--warn); }
.exit { color: var(--bad); font-size: .8rem; max-width: 38rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }

/* Session charts */
#machines { display: flex; flex-wrap: wrap; gap: .6rem; align-items: flex-start; }
#machines > .machine { flex: 1 1 32rem; min-width: 0; margin-bottom: 0; }
.graph { overflow: auto; max-height: 48rem; border-top: 1px solid var(--line); margin-top: .4rem; padding-top: .4rem; cursor: zoom-in; }
.graph:not(.fit) { cursor: zoom-out; }
.graph svg { display: block; max-width: none; }
.graph.fit svg { max-width: 100%; height: auto; }
.last-transition { color: var(--muted); font-size: .8rem; }
/* A session recovering after a restart of its agent: its state lit as a warning. */
.machine .chart-graph .state.current[data-name="recovering"] > rect.box { fill: var(--bad); stroke: var(--bad); }
.machine .chart-graph .state.current[data-name="recovering"] > text.name { fill: #fff; }
.machine { border: 1px solid var(--line); border-radius: .4rem; padding: .5rem .6rem; margin-bottom: .6rem; }
.machine-title { display: flex; flex-wrap: wrap; gap: .5rem; align-items: baseline; margin-bottom: .4rem; }
ol.chart { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .4rem; }
.chart-state { border: 1px solid var(--line); border-radius: .35rem; padding: .25rem .45rem; min-width: 7rem; font-size: .82rem; }
.chart-state .name { font-weight: 600; }
.chart-state.final { border-style: double; border-width: 3px; }
.chart-state.initial .name::before { content: "→ "; color: var(--muted); }
.chart-state.current { background: var(--current); border-color: var(--warn); box-shadow: 0 0 0 2px var(--warn); }
.chart-state ul { list-style: none; margin: .15rem 0 0; padding: 0; color: var(--muted); font-size: .75rem; }
.anywhere { color: var(--muted); font-size: .75rem; margin-top: .35rem; }

/* Pending requests and the timeline */
table { border-collapse: collapse; width: 100%; font-size: .85rem; }
th { text-align: left; color: var(--muted); font-weight: normal; border-bottom: 1px solid var(--line); }
td { padding: .15rem .4rem .15rem 0; border-bottom: 1px solid var(--line); }
td.method { font-family: ui-monospace, monospace; }
ol#timeline { list-style: none; margin: 0; padding: 0; max-height: 32rem; overflow-y: auto; font-size: .84rem; }
.entry { display: grid; grid-template-columns: 6.5rem 5.5rem minmax(0, 1fr); gap: .4rem; padding: .18rem 0; border-bottom: 1px solid var(--line); }
.entry .time { font-family: ui-monospace, monospace; color: var(--muted); }
.entry .kind { font-size: .72rem; text-transform: uppercase; letter-spacing: .03em; }
.entry .what { min-width: 0; overflow-wrap: anywhere; }
.entry .subject { font-family: ui-monospace, monospace; font-size: .8rem; color: var(--muted); }
.sev-warn .kind { color: var(--warn); }
.sev-error .kind { color: var(--bad); font-weight: 700; }
.sev-info .kind { color: var(--info); }
${CHART_SVG_CSS}`;
