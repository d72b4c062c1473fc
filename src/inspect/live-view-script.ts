/**
 * The live view's script (`/live-view.js`), shipped as a string: plain browser JavaScript, no
 * library. It listens to `/events` (Server-Sent Events; the browser reconnects by itself),
 * rebuilds the four panels from each view it gets, and ticks ages and uptimes every second
 * from the server's clock. Everything from the view is put in as text, never as HTML.
 *
 * The page's elements carry `data-*` attributes (kind, label, status, pid, restarts, state,
 * current, a session's owner) for the end-to-end test in spec/inspect/live-view-browser.spec.ts; the charts'
 * SVG carries the classes chart-draw-script.ts describes.
 */
import { CHART_DRAW_SCRIPT } from './chart-draw-script.js';

export const LIVE_VIEW_SCRIPT = String.raw`(function () {
  'use strict';
${CHART_DRAW_SCRIPT}
  var view = null;
  var skew = 0; // this browser's clock minus the server's

  function el(tag, props, children) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        var value = props[key];
        if (value === undefined || value === null || value === false) return;
        if (key === 'text') node.textContent = String(value);
        else if (key === 'className') node.className = value;
        else node.setAttribute(key, String(value));
      });
    }
    (children || []).forEach(function (child) {
      if (child) node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }

  function serverNow() { return Date.now() - skew; }

  function duration(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + 's';
    var m = Math.floor(s / 60);
    if (m < 60) return m + 'm ' + (s % 60) + 's';
    var h = Math.floor(m / 60);
    if (h < 48) return h + 'h ' + (m % 60) + 'm';
    return Math.floor(h / 24) + 'd ' + (h % 24) + 'h';
  }

  function clock(ms) {
    var d = new Date(ms);
    var pad = function (n, w) { n = String(n); while (n.length < (w || 2)) n = '0' + n; return n; };
    return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()) + '.' + pad(d.getMilliseconds(), 3);
  }

  function since(ms, prefix) {
    return el('span', { className: 'uptime', 'data-since': ms, 'data-prefix': prefix || '', text: (prefix || '') + duration(serverNow() - ms) });
  }

  function actorNode(actor) {
    var row = el('div', { className: 'row' }, [
      el('span', { className: 'dot', title: actor.status }),
      el('span', { className: 'label', text: actor.label }),
      el('span', { className: 'badge', text: actor.kind === 'machine' ? 'chart' : actor.kind }),
      actor.detail ? el('span', { className: 'detail', text: actor.detail }) : null,
      actor.state ? el('span', { className: 'state', text: actor.state }) : null,
      actor.pid !== undefined ? el('span', { className: 'pid', 'data-testid': 'pid', text: 'pid ' + actor.pid }) : null,
      actor.restarts > 0 || actor.kind === 'port' || actor.kind === 'supervisor'
        ? el('span', { className: 'restarts' + (actor.restarts > 0 ? ' hot' : ''), 'data-testid': 'restarts', title: 'restarts', text: '\u21bb ' + actor.restarts })
        : null,
      actor.status === 'active' ? since(actor.startedAt, 'up ') : el('span', { className: 'uptime', text: actor.status }),
      actor.exit ? el('span', { className: 'exit', title: actor.exit, text: (actor.status === 'active' ? 'last exit: ' : '') + actor.exit }) : null
    ]);
    var children = actor.children.length ? el('ul', { className: 'tree' }, actor.children.map(actorNode)) : null;
    return el('li', {
      className: 'node kind-' + actor.kind + ' status-' + actor.status,
      'data-kind': actor.kind, 'data-label': actor.label, 'data-status': actor.status,
      'data-restarts': actor.restarts, 'data-pid': actor.pid, 'data-key': actor.key
    }, [row, children]);
  }

  function renderTree() {
    var box = document.getElementById('tree');
    if (!view.sources.length) {
      var ws = 'ws://' + location.host;
      box.replaceChildren(el('p', { className: 'empty' }, ['No stream yet. Start warden with ', el('code', { text: 'warden acp --agent demo --inspect ' + ws }), ' and its actors show up here.']));
      return;
    }
    box.replaceChildren.apply(box, view.sources.map(function (source) {
      return el('div', { className: 'source', 'data-source': source.id }, [
        el('div', { className: 'source-title' }, [
          source.label + ' ',
          el('span', { className: 'muted', text: source.connected ? 'connected' : 'disconnected' })
        ]),
        source.roots.length ? el('ul', { className: 'tree' }, source.roots.map(actorNode)) : el('p', { className: 'empty', text: 'No actor yet.' })
      ]);
    }));
  }

  // Charts as graphs: each chart's graph (/graph.json) is laid out once by elkjs (/elk.js,
  // served by warden), then drawn by drawChart (the same code as the SVG export) with the
  // machine's states and last transition highlighted. Until its layout is there, or if
  // elkjs is missing, a chart shows as a list of its states.
  var SVG_NS = 'http://www.w3.org/2000/svg';
  var layouts = {}; // chart id -> { graph } once laid out, { pending: true }, or { failed: message }
  var elk = null;
  var graphBoxes = {}; // machine key -> { box, signature, id }
  var graphCount = 0;

  function layout(id) {
    if (layouts[id]) return layouts[id];
    if (typeof ELK !== 'function') return (layouts[id] = { failed: 'elkjs is not loaded' });
    elk = elk || new ELK();
    layouts[id] = { pending: true };
    fetch('/graph.json?chart=' + encodeURIComponent(id)).then(function (response) {
      if (!response.ok) throw new Error('graph of ' + id + ': HTTP ' + response.status);
      return response.json();
    }).then(function (graph) { return elk.layout(graph); }).then(function (graph) {
      layouts[id] = { graph: graph };
      if (view) renderMachines();
    }, function (error) {
      layouts[id] = { failed: String(error && error.message || error) };
      if (view) renderMachines();
    });
    return layouts[id];
  }

  function svgOf(item) {
    var node = document.createElementNS(SVG_NS, item.tag);
    Object.keys(item.attrs).forEach(function (key) { if (key !== 'xmlns') node.setAttribute(key, item.attrs[key]); });
    if (item.text !== undefined) node.textContent = item.text;
    (item.children || []).forEach(function (child) { node.appendChild(svgOf(child)); });
    return node;
  }

  function graphBox(machine, laid) {
    var highlight = { active: machine.active, last: machine.last };
    var signature = machine.chart + '|' + machine.active.join(',') + '|' + (machine.last ? machine.last.at + machine.last.event : '');
    var kept = graphBoxes[machine.key];
    if (!kept) {
      var box = el('div', { className: 'graph fit', 'data-testid': 'graph', title: 'click: full size / fit' });
      box.addEventListener('click', function () { box.classList.toggle('fit'); });
      kept = graphBoxes[machine.key] = { box: box, signature: '', id: 'm' + (++graphCount) };
    }
    if (kept.signature !== signature) {
      kept.box.replaceChildren(svgOf(drawChart(laid.graph, highlight, { idPrefix: kept.id, name: machine.chart })));
      kept.signature = signature;
    }
    return kept.box;
  }

  function listChart(machine, chart) {
    var current = machine.state.split('.')[0];
    var states = chart ? chart.states.map(function (state) {
      var isCurrent = state.name === current;
      return el('li', {
        className: 'chart-state' + (isCurrent ? ' current' : '') + (state.final ? ' final' : '') + (chart.initial === state.name ? ' initial' : ''),
        'data-state': state.name, 'data-current': isCurrent ? 'true' : 'false', 'aria-current': isCurrent ? 'true' : null
      }, [
        el('div', { className: 'name', text: state.name }),
        el('ul', {}, state.transitions.map(function (t) { return el('li', { text: t.event + ' \u2192 ' + t.target }); }))
      ]);
    }) : [el('li', { className: 'chart-state current', 'data-state': current, 'data-current': 'true', text: machine.state })];
    return el('ol', { className: 'chart', 'aria-label': 'state chart of ' + machine.label }, states);
  }

  // A session's owner host and epoch (a store several hosts share): 'owner NAME 1f3a2b4c · epoch 2',
  // or 'moved to …' once another host took it; the whole host id in the tooltip.
  function ownerBadge(owner) {
    var host = [owner.hostName, owner.hostId ? owner.hostId.slice(0, 8) : null].filter(Boolean).join(' ') || (owner.here ? '?' : 'no host');
    var epoch = owner.epoch === undefined ? '' : ' \u00b7 epoch ' + owner.epoch;
    var named = owner.hostId ? 'host ' + owner.hostId + (owner.hostName ? ' (' + owner.hostName + ')' : '') : owner.hostName ? 'host ' + owner.hostName : 'no host';
    var whole = named + (owner.epoch === undefined ? '' : ', epoch ' + owner.epoch);
    return el('span', {
      className: 'owner' + (owner.here ? '' : ' moved'), 'data-testid': 'owner',
      'data-owner-host': owner.hostId, 'data-owner-name': owner.hostName, 'data-owner-epoch': owner.epoch, 'data-owner-here': String(owner.here),
      title: (owner.here ? 'owned by ' : 'moved to ') + whole,
      text: (owner.here ? 'owner ' : 'moved to ') + host + epoch
    });
  }

  function renderMachines() {
    var box = document.getElementById('machines');
    if (!view.machines.length) {
      box.replaceChildren(el('p', { className: 'empty', text: 'No chart yet.' }));
      return;
    }
    var shown = {};
    box.replaceChildren.apply(box, view.machines.map(function (machine) {
      shown[machine.key] = true;
      var chart = view.charts[machine.chart];
      var laid = chart ? layout(machine.chart) : null;
      var drawing = laid && laid.graph ? graphBox(machine, laid) : listChart(machine, chart);
      var last = machine.last ? el('div', { className: 'last-transition', 'data-testid': 'last-transition', text: 'last: ' + machine.last.from + ' \u2192 ' + machine.last.to + ' on ' + machine.last.event + ' at ' + clock(machine.last.at) }) : null;
      // A supervisor or a port (on its declared chart) says what it is; its restarts are in the tree.
      var isMachine = machine.kind === 'machine';
      return el('div', {
        className: 'machine kind-' + machine.kind + ' status-' + machine.status, 'data-testid': 'machine', 'data-key': machine.key,
        'data-kind': machine.kind, 'data-label': machine.label,
        'data-session': machine.sessionId, 'data-state': machine.state, 'data-status': machine.status,
        'data-layout': laid ? (laid.graph ? 'graph' : laid.failed ? 'failed' : 'pending') : 'none'
      }, [
        el('div', { className: 'machine-title' }, [
          el('span', { className: 'label', text: machine.label }),
          isMachine ? null : el('span', { className: 'badge', text: machine.kind }),
          machine.agent ? el('span', { className: 'badge', text: machine.agent }) : null,
          el('span', { className: 'state', text: machine.status === 'active' ? machine.state : machine.state + ' (' + machine.status + ')' }),
          isMachine ? el('span', { className: 'restarts' + (machine.restarts ? ' hot' : ''), title: 'agent restarts', text: '\u21bb ' + (machine.restarts || 0) }) : null,
          machine.owner ? ownerBadge(machine.owner) : null,
          machine.failure ? el('span', { className: 'exit', title: machine.failure, text: machine.failure }) : null
        ]),
        last,
        drawing
      ]);
    }));
    Object.keys(graphBoxes).forEach(function (key) { if (!shown[key]) delete graphBoxes[key]; });
  }

  function renderPending() {
    var body = document.getElementById('pending');
    if (!view.pending.length) {
      body.replaceChildren(el('tr', {}, [el('td', { colspan: 4, className: 'empty', text: 'None.' })]));
      return;
    }
    body.replaceChildren.apply(body, view.pending.map(function (request) {
      return el('tr', { 'data-testid': 'pending-request', 'data-method': request.method }, [
        el('td', { className: 'method', text: request.method }),
        el('td', { text: request.requestId }),
        el('td', { className: 'muted', text: request.via }),
        el('td', {}, [since(request.sentAt)])
      ]);
    }));
  }

  function renderTimeline() {
    var list = document.getElementById('timeline');
    var entries = view.timeline.slice().reverse();
    list.replaceChildren.apply(list, entries.map(function (entry) {
      return el('li', { className: 'entry kind-' + entry.kind + ' sev-' + entry.severity, 'data-kind': entry.kind, 'data-seq': entry.seq }, [
        el('span', { className: 'time', text: clock(entry.at) }),
        el('span', { className: 'kind', text: entry.kind }),
        el('span', { className: 'what' }, [el('span', { className: 'subject', text: entry.subject }), ' ', el('span', { className: 'text', title: entry.text, text: entry.text })])
      ]);
    }));
  }

  function renderSummary() {
    var count = function (nodes) { return nodes.reduce(function (n, a) { return n + 1 + count(a.children); }, 0); };
    var actors = view.sources.reduce(function (n, s) { return n + count(s.roots); }, 0);
    var dropped = view.dropped.actors ? ', ' + view.dropped.actors + ' actors not kept' : '';
    var plural = function (n, one, many) { return n + ' ' + (n === 1 ? one : many); };
    document.getElementById('summary').textContent = plural(actors, 'actor', 'actors') + ', ' + plural(view.machines.length, 'session', 'sessions') + ', ' + view.pending.length + ' pending' + dropped;
  }

  function render() {
    renderTree();
    renderMachines();
    renderPending();
    renderTimeline();
    renderSummary();
  }

  function tick() {
    var now = serverNow();
    document.querySelectorAll('[data-since]').forEach(function (node) {
      node.textContent = node.getAttribute('data-prefix') + duration(now - Number(node.getAttribute('data-since')));
    });
  }

  function setConnection(state, text) {
    var node = document.getElementById('connection');
    node.setAttribute('data-state', state);
    node.textContent = text;
  }

  var events = new EventSource('/events');
  events.onopen = function () { setConnection('live', 'live'); };
  events.onerror = function () { setConnection('lost', 'reconnecting\u2026'); };
  events.onmessage = function (message) {
    view = JSON.parse(message.data);
    skew = Date.now() - view.now;
    setConnection('live', 'live');
    render();
  };
  setInterval(tick, 1000);
})();
`;
