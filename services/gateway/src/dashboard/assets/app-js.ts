/**
 * The dashboard's script, served as `/dashboard/app.js`. Plain browser JavaScript, no framework and
 * no build step. It builds every element with createElement/textContent — never innerHTML — because
 * task texts, session names and worker lines are user input. (Written without template literals:
 * it lives inside one.)
 *
 * Over 300 lines because it is the whole page in one string (it is to become typed modules compiled
 * for the browser).
 */
export const APP_JS = String.raw`
(function () {
  'use strict';

  var STATE_LABEL = {
    TASK_STATE_SUBMITTED: 'submitted', TASK_STATE_WORKING: 'working', TASK_STATE_INPUT_REQUIRED: 'input required',
    TASK_STATE_AUTH_REQUIRED: 'auth required', TASK_STATE_COMPLETED: 'completed', TASK_STATE_FAILED: 'failed',
    TASK_STATE_CANCELED: 'canceled', TASK_STATE_REJECTED: 'rejected', TASK_STATE_UNSPECIFIED: 'unknown'
  };
  var FILTERS = [
    ['all', 'All states'], ['open', 'Open'], ['TASK_STATE_WORKING', 'Working'], ['TASK_STATE_SUBMITTED', 'Submitted'],
    ['queued', 'Queued'], ['TASK_STATE_INPUT_REQUIRED', 'Input required'], ['held', 'Held'], ['stalled', 'Stalled'],
    ['finished', 'Finished'], ['TASK_STATE_COMPLETED', 'Completed'], ['TASK_STATE_FAILED', 'Failed'],
    ['TASK_STATE_CANCELED', 'Canceled'], ['TASK_STATE_REJECTED', 'Rejected']
  ];
  var PAGE = 50;

  var S = {
    machine: '', viewer: { device: '', self: false }, counts: null, agents: [], agentsAt: 0, sessions: [],
    refusals: [], notes: [], live: false, list: null, cursors: [], rowEls: new Map(), viewData: null, armed: 0
  };

  // ---- DOM ---------------------------------------------------------------------------------------

  function h(tag, props, kids) {
    var el = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (k) {
        var v = props[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'class') el.className = v;
        else if (k === 'text') el.textContent = String(v);
        else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
        else el.setAttribute(k, v === true ? '' : String(v));
      });
    }
    add(el, kids);
    return el;
  }
  function add(el, kids) {
    if (kids === undefined || kids === null || kids === false) return;
    if (!Array.isArray(kids)) kids = [kids];
    kids.forEach(function (c) {
      if (c === undefined || c === null || c === false) return;
      if (Array.isArray(c)) add(el, c);
      else el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
    });
  }
  function $(id) { return document.getElementById(id); }
  function link(hash, text, cls) { return h('a', { href: hash, 'class': cls, text: text }); }
  function taskHref(key) { return '#task/' + encodeURIComponent(key); }
  function chainHref(key) { return '#chain/' + encodeURIComponent(key); }
  function pill(state) { return h('span', { 'class': 'pill st-' + state, text: STATE_LABEL[state] || state }); }
  function badge(text, cls, title) { return h('span', { 'class': 'badge ' + (cls || ''), text: text, title: title }); }

  var toastTimer;
  function toast(msg, bad) {
    var t = $('toast');
    if (!t) { t = h('div', { id: 'toast', role: 'status' }); document.body.appendChild(t); }
    t.className = 'toast' + (bad ? ' bad' : '');
    t.textContent = msg;
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { t.hidden = true; }, bad ? 6000 : 3000);
  }

  // ---- time --------------------------------------------------------------------------------------

  function ago(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + 's';
    var m = Math.floor(s / 60);
    if (m < 60) return m + 'm';
    var hr = Math.floor(m / 60);
    if (hr < 48) return hr + 'h ' + (m % 60) + 'm';
    return Math.floor(hr / 24) + 'd';
  }
  function when(at) {
    var t = typeof at === 'number' ? at : Date.parse(at);
    if (!t) return '';
    return new Date(t).toLocaleString();
  }
  function ageEl(at, prefix) {
    return h('span', { 'class': 'age', 'data-at': String(at), 'data-prefix': prefix || '', title: when(at), text: (prefix || '') + ago(Date.now() - at) });
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll('[data-at]').forEach(function (el) {
      el.textContent = (el.getAttribute('data-prefix') || '') + ago(now - Number(el.getAttribute('data-at')));
    });
    document.querySelectorAll('[data-signal]').forEach(function (el) {
      var a = S.agents[Number(el.getAttribute('data-signal'))];
      if (a) paintSignal(el, a, now);
    });
  }

  // ---- server ------------------------------------------------------------------------------------

  function answer(r) {
    return r.text().then(function (t) {
      var b = null;
      try { b = t ? JSON.parse(t) : null; } catch (e) { b = null; }
      if (!r.ok) throw new Error((b && b.error && b.error.message) || ('the gateway answered ' + r.status));
      return b;
    });
  }
  function getJSON(path) {
    return fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store' }).then(answer);
  }
  function postJSON(path, body) {
    return fetch(path, {
      method: 'POST', cache: 'no-store',
      headers: { 'content-type': 'application/json', 'x-shrooms-dashboard': '1', accept: 'application/json' },
      body: JSON.stringify(body)
    }).then(answer);
  }
  function qs(params) {
    var u = new URLSearchParams();
    Object.keys(params).forEach(function (k) { if (params[k] !== undefined && params[k] !== '' && params[k] !== null) u.set(k, String(params[k])); });
    var s = u.toString();
    return s ? '?' + s : '';
  }

  // ---- routes ------------------------------------------------------------------------------------

  function route() {
    var raw = location.hash.replace(/^#/, '');
    var q = '';
    var i = raw.indexOf('?');
    if (i >= 0) { q = raw.slice(i + 1); raw = raw.slice(0, i); }
    var slash = raw.indexOf('/');
    var view = (slash >= 0 ? raw.slice(0, slash) : raw) || 'tasks';
    var arg = '';
    if (slash >= 0) { try { arg = decodeURIComponent(raw.slice(slash + 1)); } catch (e) { arg = ''; } }
    return { view: view, arg: arg, params: new URLSearchParams(q) };
  }
  function filterOf(r) {
    return { agent: r.params.get('agent') || '', state: r.params.get('state') || 'all', q: r.params.get('q') || '' };
  }
  function tasksHash(f) {
    var s = qs({ agent: f.agent, state: f.state === 'all' ? '' : f.state, q: f.q });
    return '#tasks' + s;
  }

  // ---- chrome: header and tabs ------------------------------------------------------------------

  function paintChrome() {
    document.title = 'shrooms · ' + (S.machine || 'dashboard');
    $('machine').textContent = S.machine ? '· ' + S.machine : '';
    var live = $('live');
    live.setAttribute('data-live', S.live ? '1' : '0');
    live.textContent = S.live ? 'live' : 'reconnecting…';
    var v = $('viewer');
    v.className = 'viewer' + (S.viewer.self ? ' owner' : '');
    v.textContent = S.viewer.self ? 'owner · ' + S.viewer.device : 'read-only · ' + S.viewer.device;
    v.title = S.viewer.self ? 'You are on this machine: you may cancel, release, reject and stop reminders.' : 'Only this machine itself may act; you see everything.';
    var r = route().view;
    var c = S.counts || { total: 0, open: 0, held: 0, stalled: 0 };
    var attention = (c.held || 0) + (c.stalled || 0);
    var tabs = [
      ['agents', 'Agents', String(S.agents.length), false],
      ['tasks', 'Tasks', c.open + ' / ' + c.total, false],
      ['chains', 'Chains', null, false],
      ['attention', 'Attention', String(attention + S.refusals.length), attention > 0]
    ];
    var nav = $('tabs');
    nav.replaceChildren.apply(nav, tabs.map(function (t) {
      var on = r === t[0] || (r === 'task' && t[0] === 'tasks') || (r === 'chain' && t[0] === 'chains');
      return h('a', { href: '#' + t[0], 'class': on ? 'on' : '', 'data-tab': t[0], title: t[0] === 'tasks' ? 'open / all tasks' : null }, [t[1], t[2] !== null ? h('span', { 'class': 'count' + (t[3] ? ' hot' : ''), text: t[2] }) : null]);
    }));
  }

  function show(node) {
    var main = $('main');
    main.replaceChildren(node);
  }
  function loading() { return h('p', { 'class': 'empty', text: 'Loading…' }); }
  function failed(err) { return h('p', { 'class': 'error', text: 'Could not load: ' + (err && err.message ? err.message : String(err)) }); }

  // ---- task rows ---------------------------------------------------------------------------------

  function canAct(r) { return S.viewer.self && r.machine === S.machine && r.open; }
  // The cancel rule: the owner's machine, or the device that asked for the task (as over A2A).
  function canCancel(r) { return r.machine === S.machine && r.open && (S.viewer.self || r.device === S.viewer.device); }

  function confirmButton(label, confirmLabel, cls, run) {
    var armed = false;
    var timer;
    var b = h('button', { 'class': cls, type: 'button', text: label });
    function disarm() {
      if (!armed) return;
      armed = false;
      S.armed--;
      b.textContent = label;
      b.classList.remove('confirm');
    }
    b.addEventListener('click', function () {
      if (!armed) {
        armed = true;
        S.armed++;
        b.textContent = confirmLabel;
        b.classList.add('confirm');
        timer = setTimeout(disarm, 5000);
        return;
      }
      clearTimeout(timer);
      b.disabled = true;
      run().then(function () { b.disabled = false; disarm(); }, function () { b.disabled = false; disarm(); });
    });
    return b;
  }

  function act(path, body, done) {
    return postJSON(path, body).then(function (res) {
      toast(done);
      if (res && res.row) onRows([res.row]);
      return res;
    }, function (err) {
      toast(err.message, true);
      throw err;
    });
  }

  function taskActions(r) {
    if (!canCancel(r)) return null;
    var out = [];
    if (r.held && canAct(r)) {
      out.push(h('button', { 'class': 'go', type: 'button', text: 'Release', 'data-action': 'release', onclick: function (e) {
        e.target.disabled = true;
        act('/dashboard/api/tasks/release', { key: r.key }, 'Released ' + r.name + ': it runs now').catch(function () { e.target.disabled = false; });
      } }));
      out.push(confirmButton('Reject', 'Confirm reject', 'danger', function () {
        return act('/dashboard/api/tasks/reject', { key: r.key }, 'Rejected ' + r.name);
      }));
    }
    out.push(confirmButton('Cancel task', 'Confirm cancel', 'danger', function () {
      return act('/dashboard/api/tasks/cancel', { key: r.key }, 'Canceled ' + r.name);
    }));
    out[out.length - 1].setAttribute('data-action', 'cancel');
    return h('div', { 'class': 'actions' }, out);
  }

  function taskBadges(r) {
    return [
      r.held && r.open ? badge('held for the owner', 'held') : null,
      r.stalled && r.open ? badge('stalled', 'stalled', 'stalled since ' + when(r.stalled)) : null,
      r.queued && r.open ? badge('queued') : null,
      r.nudges ? badge(r.nudges + (r.nudges === 1 ? ' reminder' : ' reminders'), 'warn') : null,
      r.expired ? badge('expired') : null,
      r.acknowledged ? badge('acknowledged') : null,
      r.depth ? badge('depth ' + r.depth) : null
    ];
  }

  function taskRow(r) {
    var el = h('div', {
      'class': 'task st-' + r.state + (r.held && r.open ? ' is-held' : ''),
      'data-key': r.key, 'data-task': r.name, 'data-state': r.state
    }, [
      h('div', { 'class': 'l1' }, [pill(r.state), link(taskHref(r.key), r.name, 'tid'), taskBadges(r), ageEl(r.createdAt)]),
      h('div', { 'class': 'who' }, [h('b', { text: r.from }), ' → ', h('b', { text: r.to })]),
      r.text ? h('div', { 'class': 'text', text: r.text }) : null,
      r.result ? h('div', { 'class': 'result', text: r.result }) : null,
      r.lastWorkerLine && r.lastWorkerLine !== r.result ? h('div', { 'class': 'worker', text: r.lastWorkerLine }) : null,
      taskActions(r)
    ]);
    return el;
  }

  function matches(r, f) {
    if (f.agent && r.to !== f.agent) return false;
    switch (f.state) {
      case 'all': break;
      case 'open': if (!r.open) return false; break;
      case 'finished': if (r.open) return false; break;
      case 'queued': if (!r.open || !r.queued) return false; break;
      case 'held': if (!r.open || !r.held) return false; break;
      case 'stalled': if (!r.open || !r.stalled) return false; break;
      default: if (r.state !== f.state) return false;
    }
    if (f.q) {
      var s = (r.name + '\n' + r.text + '\n' + r.from).toLowerCase();
      if (s.indexOf(f.q.toLowerCase()) < 0) return false;
    }
    return true;
  }

  // ---- views -------------------------------------------------------------------------------------

  var views = {};
  var loadSeq = 0;
  // A throttle, not a debounce: under a steady stream of changes the view still reloads a few
  // times a second. It waits while a two-step button is armed, so a reload cannot eat the click.
  var reloadTimer = null;
  function reloadSoon(ms) {
    if (reloadTimer) return;
    reloadTimer = setTimeout(function () {
      reloadTimer = null;
      if (S.armed > 0) reloadSoon(1000);
      else render(true);
    }, ms || 300);
  }

  views.tasks = function (r, quiet) {
    var f = filterOf(r);
    var cursor = S.cursors.length ? S.cursors[S.cursors.length - 1] : '';
    var seq = ++loadSeq;
    if (!quiet || !S.list) show(h('div', null, [filtersBar(f, null), loading()]));
    return getJSON('/dashboard/api/tasks' + qs({ agent: f.agent, state: f.state, q: f.q, cursor: cursor, limit: PAGE })).then(function (page) {
      if (seq !== loadSeq) return;
      S.list = { filter: f, rows: page.rows, next: page.next, total: page.total };
      paintTasks();
    }, function (err) { if (seq === loadSeq) show(failed(err)); });
  };

  function filtersBar(f, total) {
    var agents = {};
    S.sessions.forEach(function (s) { agents[s.agent] = true; });
    S.agents.forEach(function (a) { agents[a.agent] = true; });
    if (f.agent) agents[f.agent] = true;
    var sel = h('select', { 'aria-label': 'session', id: 'f-agent', onchange: function () { S.cursors = []; location.hash = tasksHash({ agent: sel.value, state: f.state, q: f.q }); } },
      [h('option', { value: '', text: 'All sessions' })].concat(Object.keys(agents).sort().map(function (a) {
        return h('option', { value: a, selected: a === f.agent, text: a });
      })));
    var st = h('select', { 'aria-label': 'state', id: 'f-state', onchange: function () { S.cursors = []; location.hash = tasksHash({ agent: f.agent, state: st.value, q: f.q }); } },
      FILTERS.map(function (x) { return h('option', { value: x[0], selected: x[0] === f.state, text: x[1] }); }));
    var qTimer;
    var q = h('input', { type: 'search', placeholder: 'Search id, text, asker', value: f.q, 'aria-label': 'search', oninput: function () {
      clearTimeout(qTimer);
      qTimer = setTimeout(function () { S.cursors = []; location.hash = tasksHash({ agent: f.agent, state: f.state, q: q.value }); }, 350);
    } });
    return h('div', { 'class': 'filters' }, [sel, st, q, total === null ? null : h('span', { 'class': 'total', id: 'total', text: total + (total === 1 ? ' task' : ' tasks') })]);
  }

  function paintTasks() {
    var L = S.list;
    S.rowEls = new Map();
    var rows = h('div', { 'class': 'rows', id: 'rows' });
    L.rows.forEach(function (r) { var el = taskRow(r); S.rowEls.set(r.key, el); rows.appendChild(el); });
    var pager = h('div', { 'class': 'pager' }, [
      S.cursors.length ? h('button', { type: 'button', text: '‹ Newer', onclick: function () { S.cursors.pop(); render(); } }) : h('span'),
      L.next ? h('button', { type: 'button', text: 'Older ›', onclick: function () { S.cursors.push(L.next); render(); } }) : h('span')
    ]);
    var focus = document.activeElement && document.activeElement.type === 'search';
    show(h('div', null, [
      filtersBar(L.filter, L.total),
      L.rows.length ? rows : h('p', { 'class': 'empty', text: 'No tasks match.' }),
      pager
    ]));
    if (focus) { var input = document.querySelector('input[type=search]'); if (input) { input.focus(); input.setSelectionRange(input.value.length, input.value.length); } }
  }

  views.task = function (r, quiet) {
    var seq = ++loadSeq;
    if (!quiet) show(loading());
    return getJSON('/dashboard/api/task' + qs({ key: r.arg })).then(function (d) {
      if (seq !== loadSeq) return;
      S.viewData = d;
      show(taskDetail(d));
    }, function (err) { if (seq === loadSeq) show(failed(err)); });
  };

  function fact(label, value) {
    if (value === undefined || value === null || value === '' || value === false) return null;
    return h('div', null, [h('dt', { text: label }), h('dd', null, value)]);
  }

  function taskDetail(d) {
    var t = d.detail;
    var r = t.row;
    var parts = [
      h('div', { 'class': 'detail-head' }, [pill(r.state), h('h2', { text: r.name, 'data-task': r.name, 'data-state': r.state }), taskBadges(r)]),
      h('dl', { 'class': 'facts' }, [
        fact('to', r.to),
        fact('from', r.from),
        fact('asked by', r.origin === 'schedule' ? 'schedule ' + (r.schedule || '') : r.origin === 'agent' ? 'an agent (a claimed session)' : 'a person'),
        fact('asked', [when(r.createdAt), ' (', ageEl(r.createdAt), ' ago)']),
        fact('last change', when(r.statusAt)),
        fact('reminders', r.nudges ? String(r.nudges) : '0'),
        fact('stalled', r.stalled ? when(r.stalled) : null),
        fact('parent', r.parent ? (r.parentKey ? link(taskHref(r.parentKey), r.parent) : r.parent) : null),
        fact('chain', link(chainHref(r.key), d.chainSize > 1 ? 'show the chain (' + d.chainSize + ' tasks)' : 'show as a tree')),
        fact('context', h('span', { 'class': 'mono', text: t.contextId }))
      ]),
      taskActions(r)
    ];
    if (t.status.text) parts.push(h('h2', { text: r.open ? 'Status' : 'Result' }), h('div', { 'class': 'msg agent' }, h('pre', { text: t.status.text })));
    if (r.lastWorkerLine && r.lastWorkerLine !== (t.status.text || '').replace(/\s+/g, ' ').trim()) parts.push(h('h2', { text: 'Last worker line' }), h('div', { 'class': 'msg' }, h('pre', { text: r.lastWorkerLine })));
    if (d.children && d.children.length) {
      parts.push(h('h2', { text: 'Asked from inside this task' }), h('div', { 'class': 'rows' }, d.children.map(taskRow)));
    }
    parts.push(h('h2', { text: 'History' }));
    if (t.historyOmitted) parts.push(h('p', { 'class': 'empty', text: t.historyOmitted + ' older messages not shown' }));
    parts.push(h('div', { 'class': 'msgs' }, t.history.map(function (m) {
      return h('div', { 'class': 'msg ' + m.role }, [
        h('div', { 'class': 'meta' }, [h('span', { text: m.role }), m.at ? h('span', { text: when(m.at) }) : null, h('span', { 'class': 'mono', text: m.messageId })]),
        h('pre', { text: m.text })
      ]);
    })));
    if (t.artifacts.length) {
      parts.push(h('h2', { text: 'Artifacts' }));
      t.artifacts.forEach(function (a) { parts.push(h('div', { 'class': 'msg' }, [h('div', { 'class': 'meta', text: a.name }), h('pre', { text: a.text })])); });
    }
    parts.push(h('details', { 'class': 'md' }, [
      h('summary', { text: 'Metadata' }),
      h('table', { 'class': 'kv' }, h('tbody', null, Object.keys(t.metadata).sort().map(function (k) {
        return h('tr', null, [h('td', { text: k }), h('td', { 'class': 'mono', text: t.metadata[k] })]);
      })))
    ]));
    return h('div', { 'data-detail': r.key }, parts);
  }

  // chains

  function originOf(row) {
    if (!row) return [h('span', { 'class': 'kind', text: 'unknown' }), 'the first task is no longer in the ledger'];
    if (row.origin === 'schedule') return [h('span', { 'class': 'kind', text: 'schedule' }), h('b', { text: row.schedule || '' }), ' via ', row.device];
    if (row.origin === 'agent') return [h('span', { 'class': 'kind', text: 'agent' }), h('b', { text: row.from })];
    return [h('span', { 'class': 'kind', text: 'person' }), h('b', { text: row.from })];
  }

  function treeNode(n, here) {
    var r = n.row;
    var node = r
      ? h('a', { href: taskHref(r.key), 'class': 'node st-' + r.state + (here === r.key ? ' here' : ''), 'data-node': r.name, 'data-state': r.state, title: r.text }, [
          pill(r.state), h('span', { 'class': 'to', text: r.to }), h('span', { 'class': 'mono', text: r.id }),
          r.text ? h('span', { 'class': 'snip', text: r.text.length > 60 ? r.text.slice(0, 59) + '…' : r.text }) : null
        ])
      : h('span', { 'class': 'node missing', text: (n.name || n.key) + ' (not in the ledger)' });
    var kids = n.children.map(function (c) { return treeNode(c, here); });
    if (n.more) kids.push(h('li', { 'class': 'empty', text: '+ ' + n.more + ' more' }));
    return h('li', null, [node, kids.length ? h('ul', { 'class': 'tree' }, kids) : null]);
  }

  function chainCard(c, here) {
    var first = c.root.row || (c.root.children[0] && c.root.children[0].row);
    return h('div', { 'class': 'chain', 'data-chain': c.root.key }, [
      h('div', { 'class': 'origin' }, [originOf(c.root.row ? c.root.row : null), ' · ', c.size + (c.size === 1 ? ' task' : ' tasks'), first ? [' · started ', ageEl(first.createdAt), ' ago'] : null]),
      h('ul', { 'class': 'tree top' }, treeNode(c.root, here))
    ]);
  }

  views.chains = function (r, quiet) {
    var seq = ++loadSeq;
    var offset = Number(r.params.get('offset') || 0);
    if (!quiet) show(loading());
    return getJSON('/dashboard/api/chains' + qs({ offset: offset, limit: 20 })).then(function (d) {
      if (seq !== loadSeq) return;
      S.viewData = d;
      var pager = h('div', { 'class': 'pager' }, [
        offset > 0 ? link('#chains?offset=' + Math.max(0, offset - 20), '‹ Newer') : h('span'),
        d.next !== undefined ? link('#chains?offset=' + d.next, 'Older ›') : h('span')
      ]);
      show(h('div', null, [
        d.total ? h('p', { 'class': 'hint', text: 'Who asked whom: each tree starts at the person, agent or schedule that asked first and follows shrooms/parent down; colours are task states.' })
          : h('p', { 'class': 'empty', text: 'No task has asked another yet. When a task asks another agent (shrooms/parent), its chain shows here.' }),
        d.chains.map(function (c) { return chainCard(c, null); }),
        pager
      ]));
    }, function (err) { if (seq === loadSeq) show(failed(err)); });
  };

  views.chain = function (r, quiet) {
    var seq = ++loadSeq;
    if (!quiet) show(loading());
    return getJSON('/dashboard/api/chain' + qs({ key: r.arg })).then(function (d) {
      if (seq !== loadSeq) return;
      S.viewData = d;
      show(h('div', null, [h('h2', { text: 'Chain' }), chainCard(d.chain, r.arg), link('#chains', '‹ all chains')]));
    }, function (err) { if (seq === loadSeq) show(failed(err)); });
  };

  // attention

  views.attention = function (r, quiet) {
    var seq = ++loadSeq;
    if (!quiet) show(loading());
    return getJSON('/dashboard/api/attention').then(function (d) {
      if (seq !== loadSeq) return;
      S.viewData = d;
      S.refusals = d.refusals;
      S.notes = d.notes;
      paintAttention(d);
    }, function (err) { if (seq === loadSeq) show(failed(err)); });
  };

  function paintAttention(d) {
    show(h('div', null, [
      h('h2', { text: 'Held for the owner (' + d.held.length + ')' }),
      d.held.length ? h('div', { 'class': 'rows', id: 'held' }, d.held.map(taskRow)) : h('p', { 'class': 'empty', text: 'No task waits for you to let it through.' }),
      h('h2', { text: 'Stalled (' + d.stalled.length + ')' }),
      d.stalled.length ? h('div', { 'class': 'rows', id: 'stalled' }, d.stalled.map(taskRow)) : h('p', { 'class': 'empty', text: 'No task is stalled.' }),
      h('h2', { text: 'Guard refusals (' + S.refusals.length + ')' }),
      S.refusals.length ? refusalTable(S.refusals) : h('p', { 'class': 'empty', text: 'The guard has refused nothing since this page began following.' }),
      h('h2', { text: 'Notes to the owner' }),
      S.notes.length ? noteTable(S.notes) : h('p', { 'class': 'empty', text: 'No notes yet.' })
    ]));
  }

  function refusalTable(list) {
    return h('table', { 'class': 'list', id: 'refusals' }, [
      h('thead', null, h('tr', null, ['when', 'refused', 'asked by', 'to', 'why', ''].map(function (x) { return h('th', { text: x }); }))),
      h('tbody', null, list.map(function (f) {
        var agent = f.machine + '/' + f.session;
        var reset = f.key === 'LOOP_GUARD' && S.viewer.self && f.machine === S.machine
          ? h('button', { type: 'button', 'data-action': 'reset-guard', text: 'Reset window', title: 'Empty the loop-guard window of ' + f.device + ' for ' + agent, onclick: function (e) {
              e.target.disabled = true;
              resetGuard(agent, f.device, function () { e.target.textContent = 'Window reset'; });
            } })
          : null;
        return h('tr', { 'data-refusal': f.key }, [
          h('td', { 'class': 'nowrap' }, ageEl(Date.parse(f.at) || Date.now(), '')),
          h('td', { 'class': 'nowrap' }, [badge(f.key, 'stalled'), ' ', h('span', { 'class': 'mono', text: String(f.code) })]),
          h('td', { text: f.from ? f.device + ' (' + f.from + ')' : f.device }),
          h('td', { 'class': 'nowrap', text: agent }),
          h('td', { text: f.message }),
          h('td', { 'class': 'nowrap' }, reset)
        ]);
      }))
    ]);
  }

  function noteTable(list) {
    return h('table', { 'class': 'list' }, [
      h('thead', null, h('tr', null, ['when', 'what', 'session', 'task'].map(function (x) { return h('th', { text: x }); }))),
      h('tbody', null, list.map(function (n) {
        return h('tr', null, [
          h('td', { 'class': 'nowrap' }, ageEl(Date.parse(n.at) || Date.now(), '')),
          h('td', { 'class': 'nowrap', text: n.kind + (n.nudge ? ' #' + n.nudge : '') }),
          h('td', { 'class': 'nowrap', text: n.agent }),
          h('td', { 'class': 'mono', text: n.taskId || '' })
        ]);
      }))
    ]);
  }

  // agents

  function paintSignal(el, a, now) {
    var age = a.ageMs + (now - S.agentsAt);
    var strength = Math.max(0, Math.min(1, 1 - age / a.ttlMs));
    var bar = el.firstChild;
    bar.style.width = Math.round(strength * 100) + '%';
    el.className = 'signal' + (strength < 0.34 ? ' weak' : '');
    el.title = 'signal ' + Math.round(strength * 100) + '% (renewed ' + ago(age) + ' ago; fades after ' + ago(a.ttlMs) + ')';
    var fresh = el.nextSibling;
    if (fresh) fresh.textContent = 'renewed ' + ago(age) + ' ago';
  }

  function agentCard(a, i) {
    var sig = h('span', { 'class': 'signal', 'data-signal': String(i) }, h('i'));
    paintSignal(sig, a, Date.now());
    var reminders = a.local && S.viewer.self
      ? h('button', { type: 'button', 'data-action': a.remindersStopped ? 'resume-reminders' : 'stop-reminders', text: a.remindersStopped ? 'Resume reminders' : 'Stop reminders', onclick: function (e) {
          e.target.disabled = true;
          act('/dashboard/api/agents/reminders', { agent: a.agent, stop: !a.remindersStopped }, (a.remindersStopped ? 'Reminders resumed for ' : 'Reminders stopped for ') + a.agent)
            .catch(function () { e.target.disabled = false; });
        } })
      : null;
    var fresh = h('span', { 'class': 'fresh' });
    var card = h('div', { 'class': 'agent ag-' + a.state, 'data-agent': a.agent, 'data-state': a.state }, [
      h('div', { 'class': 'name' }, [h('span', { 'class': 'm', text: a.machine + '/' }), a.session]),
      h('div', { 'class': 'row' }, [h('span', { 'class': 'dot' }), h('span', { text: a.state }), badge(a.harness), a.autoApprove ? badge('runs tools without asking', 'warn') : null, a.remindersStopped ? badge('reminders stopped', 'stalled') : null]),
      h('div', { 'class': 'row' }, [sig, fresh]),
      h('div', { 'class': 'row' }, [
        link(tasksHash({ agent: a.agent, state: 'open', q: '' }), a.openTasks + ' open'),
        h('span', { text: a.queuedTasks + ' queued' }),
        a.lastSpokeAt ? h('span', { 'class': 'fresh' }, ['spoke ', ageEl(Date.parse(a.lastSpokeAt), ''), ' ago']) : null
      ]),
      a.cwd ? h('div', { 'class': 'cwd mono', text: a.cwd }) : null,
      a.local && S.viewer.self ? guardLine(a) : null,
      reminders || a.dashboardUrl ? h('div', { 'class': 'actions' }, [reminders, a.dashboardUrl && /^https?:\/\//.test(a.dashboardUrl) ? h('a', { href: a.dashboardUrl, rel: 'noopener noreferrer', text: 'dashboard of ' + a.machine + ' ↗' }) : null]) : null
    ]);
    paintSignal(sig, a, Date.now());
    return card;
  }

  // The loop guard's window of this machine's own device for each local session: the owner sees
  // the count, the limit and when it frees, and may empty it (owner only: the control rule).
  var guards = {};
  function guardText(g) {
    if (!g) return 'loop guard: …';
    if (g.err) return 'loop guard: ' + g.err;
    var w = g.w;
    var t = 'loop guard: ' + w.count + ' of ' + w.limit + ' new tasks from ' + w.device + ' within ' + ago(w.windowMs);
    if (w.retryAfterMs > 0) return t + ' · full: the next is admitted in ' + ago(w.retryAfterMs);
    if (w.count > 0 && w.oldestAt) return t + ' · the oldest leaves it in ' + ago(Date.parse(w.oldestAt) + w.windowMs - Date.now());
    return t;
  }
  function paintGuard(agent) {
    var g = guards[agent];
    document.querySelectorAll('[data-guard]').forEach(function (el) {
      if (el.getAttribute('data-guard') !== agent) return;
      el.firstChild.textContent = guardText(g);
      if (g && g.w) el.setAttribute('data-count', String(g.w.count));
      var b = el.querySelector('button');
      if (b) { b.hidden = !(g && g.w); b.disabled = false; }
    });
  }
  function resetGuard(agent, device, done) {
    return postJSON('/dashboard/api/guard/reset', device ? { agent: agent, device: device } : { agent: agent }).then(function (res) {
      if (!device || device === S.viewer.device) guards[agent] = { w: res.window, at: Date.now() };
      paintGuard(agent);
      toast('Emptied the loop-guard window of ' + res.window.device + ' for ' + agent);
      if (done) done();
    }, function (err) { toast(err.message, true); paintGuard(agent); });
  }
  function guardLine(a) {
    var reset = h('button', { type: 'button', 'data-action': 'reset-guard', hidden: true, text: 'Reset window', title: 'Empty the window: new tasks from ' + S.viewer.device + ' are admitted again', onclick: function (e) {
      e.target.disabled = true;
      resetGuard(a.agent);
    } });
    return h('div', { 'class': 'row guard', 'data-guard': a.agent }, [h('span', { 'class': 'fresh', text: guardText(guards[a.agent]) }), reset]);
  }
  function loadGuards() {
    S.agents.forEach(function (a) {
      if (!a.local || !S.viewer.self) return;
      var g = guards[a.agent];
      if (g && Date.now() - g.at < 5000) { paintGuard(a.agent); return; }
      guards[a.agent] = { w: g && g.w, err: g && g.err, at: Date.now() };
      getJSON('/dashboard/api/guard' + qs({ agent: a.agent })).then(function (d) {
        guards[a.agent] = { w: d.window, at: Date.now() };
        paintGuard(a.agent);
      }, function (err) {
        guards[a.agent] = { err: err.message, at: Date.now() };
        paintGuard(a.agent);
      });
    });
  }

  views.agents = function () {
    if (!S.agents.length) {
      show(h('p', { 'class': 'empty', text: 'No session has a live signal. A session shows here while its bridge runs.' }));
      return Promise.resolve();
    }
    var byMachine = {};
    S.agents.forEach(function (a, i) { (byMachine[a.machine] = byMachine[a.machine] || []).push([a, i]); });
    var machines = Object.keys(byMachine).sort(function (x, y) { return x === S.machine ? -1 : y === S.machine ? 1 : x.localeCompare(y); });
    show(h('div', null, machines.map(function (m) {
      return [h('div', { 'class': 'machine-h', text: m + (m === S.machine ? ' (this machine)' : '') }),
        h('div', { 'class': 'agents' }, byMachine[m].map(function (p) { return agentCard(p[0], p[1]); }))];
    })));
    loadGuards();
    return Promise.resolve();
  };

  var lastView = '';
  function render(quiet) {
    var r = route();
    var fn = views[r.view] || views.tasks;
    var key = r.view + '|' + r.arg + '|' + r.params.toString();
    if (!quiet) { S.viewData = null; window.scrollTo(0, 0); }
    lastView = key;
    paintChrome();
    return fn(r, !!quiet);
  }

  // ---- live --------------------------------------------------------------------------------------

  function onRows(rows) {
    var r = route();
    if (r.view === 'tasks' && S.list) {
      var f = S.list.filter;
      var reload = false;
      rows.forEach(function (row) {
        var i = -1;
        for (var j = 0; j < S.list.rows.length; j++) if (S.list.rows[j].key === row.key) { i = j; break; }
        if (i >= 0) {
          if (S.list.rows[i].v > row.v) return;
          S.list.rows[i] = row;
          var old = S.rowEls.get(row.key);
          // A row whose two-step button is armed is not replaced under the pointer (the second
          // click would land on a detached button): the reload waits until it is disarmed.
          if (old && old.parentNode && old.querySelector('button.confirm')) {
            reload = true;
          } else if (old && old.parentNode) {
            var el = taskRow(row);
            old.parentNode.replaceChild(el, old);
            S.rowEls.set(row.key, el);
          }
          if (!matches(row, f)) reload = true;
        } else if (matches(row, f) && S.cursors.length === 0) {
          reload = true;
        }
      });
      if (reload) reloadSoon(300);
    } else if (r.view === 'task' && S.viewData) {
      var d = S.viewData;
      if (rows.some(function (x) { return x.key === d.detail.row.key || x.parentKey === d.detail.row.key; })) reloadSoon(200);
    } else if (r.view === 'chain' || r.view === 'chains') {
      var shown = S.viewData ? JSON.stringify(S.viewData) : '';
      if (rows.some(function (x) { return x.parentKey || shown.indexOf(JSON.stringify(x.key)) >= 0; })) reloadSoon(400);
    } else if (r.view === 'attention') {
      var d2 = S.viewData;
      if (rows.some(function (x) { return x.held || x.stalled || (d2 && (d2.held.concat(d2.stalled)).some(function (y) { return y.key === x.key; })); })) reloadSoon(300);
    }
  }

  function applyOverview(d) {
    S.machine = d.machine;
    S.viewer = d.viewer;
    S.counts = d.counts;
    S.agents = d.agents;
    S.agentsAt = Date.now();
    S.sessions = d.sessions;
    S.refusals = d.refusals;
    S.notes = d.notes;
  }

  var es;
  var retry;
  function connect() {
    clearTimeout(retry);
    if (es) es.close();
    es = new EventSource('/dashboard/events');
    es.addEventListener('hello', function (e) {
      applyOverview(JSON.parse(e.data));
      S.live = true;
      render(true);
    });
    es.addEventListener('tasks', function (e) {
      var d = JSON.parse(e.data);
      S.counts = d.counts;
      paintChrome();
      onRows(d.rows);
    });
    es.addEventListener('resync', function (e) {
      S.counts = JSON.parse(e.data).counts;
      paintChrome();
      if (route().view !== 'agents') reloadSoon(200);
    });
    es.addEventListener('agents', function (e) {
      S.agents = JSON.parse(e.data).agents;
      S.agentsAt = Date.now();
      paintChrome();
      if (route().view === 'agents') views.agents();
    });
    es.addEventListener('refusal', function (e) {
      S.refusals.unshift(JSON.parse(e.data));
      S.refusals.length = Math.min(S.refusals.length, 100);
      paintChrome();
      if (route().view === 'attention' && S.viewData) paintAttention(S.viewData);
    });
    es.addEventListener('note', function (e) {
      S.notes.unshift(JSON.parse(e.data));
      S.notes.length = Math.min(S.notes.length, 100);
      if (route().view === 'attention' && S.viewData) paintAttention(S.viewData);
    });
    es.onerror = function () {
      S.live = false;
      paintChrome();
      if (es.readyState === 2) {
        // Refused (e.g. too many dashboards open): read once, then try again a little later.
        getJSON('/dashboard/api/overview').then(function (d) { applyOverview(d); render(true); }, function () {});
        retry = setTimeout(connect, 5000);
      }
    };
  }

  window.addEventListener('hashchange', function () { S.cursors = []; render(); });
  document.addEventListener('DOMContentLoaded', function () {
    render();
    connect();
    setInterval(tick, 1000);
  });
})();
`;
