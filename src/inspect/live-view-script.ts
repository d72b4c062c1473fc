/**
 * The live view's script (`/live-view.js`), shipped as a string: plain browser JavaScript, no
 * library. It listens to `/events` (Server-Sent Events; the browser reconnects by itself),
 * rebuilds the four panels from each view it gets, and ticks ages and uptimes every second
 * from the server's clock. Everything from the view is put in as text, never as HTML.
 *
 * The page's elements carry `data-*` attributes (kind, label, status, pid, restarts, state,
 * current) for the end-to-end test in spec/inspect/live-view-browser.spec.ts.
 */
export const LIVE_VIEW_SCRIPT = String.raw`(function () {
  'use strict';
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

  function renderMachines() {
    var box = document.getElementById('machines');
    if (!view.machines.length) {
      box.replaceChildren(el('p', { className: 'empty', text: 'No session yet.' }));
      return;
    }
    box.replaceChildren.apply(box, view.machines.map(function (machine) {
      var chart = view.charts[machine.chart];
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
      var anywhere = chart && chart.anywhere.length ? el('div', { className: 'anywhere', text: 'from any state: ' + chart.anywhere.map(function (t) { return t.event + ' \u2192 ' + t.target; }).join(', ') }) : null;
      return el('div', {
        className: 'machine status-' + machine.status, 'data-testid': 'machine', 'data-key': machine.key,
        'data-session': machine.sessionId, 'data-state': machine.state, 'data-status': machine.status
      }, [
        el('div', { className: 'machine-title' }, [
          el('span', { className: 'label', text: machine.label }),
          machine.agent ? el('span', { className: 'badge', text: machine.agent }) : null,
          el('span', { className: 'state', text: machine.status === 'active' ? machine.state : machine.state + ' (' + machine.status + ')' }),
          el('span', { className: 'restarts' + (machine.restarts ? ' hot' : ''), title: 'agent restarts', text: '\u21bb ' + (machine.restarts || 0) }),
          machine.failure ? el('span', { className: 'exit', title: machine.failure, text: machine.failure }) : null
        ]),
        el('ol', { className: 'chart', 'aria-label': 'state chart of ' + machine.label }, states),
        anywhere
      ]);
    }));
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
