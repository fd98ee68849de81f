// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// sds-admin dashboard: plain JS, no build step.  Charts by Debian's
// libjs-chart.js (served by sds-admin under /javascript/).  Every piece of
// data reaches the page through textContent, never as HTML.
//
// Two pages: the fleet (#/, fleet.js) and one app (#/app/GROUP/APP): its
// state first (points, kill switches, hosts, charts that follow the data
// every second), its forms after, folded.  schemes.js draws the schemes
// panel, copy.js the traffic copy one.
'use strict';

const API = '/api/v1';
const FIELDS = [
  'visit_threshold', 'token_rate', 'token_bucket', 'concurrent_threshold',
  'timeout_ms', 'timeout_count_threshold', 'exception_threshold',
  'exception_rate_threshold', 'exception_rate_start', 'downgrade_rate',
  'delay_ms', 'retry_interval_ms', 'probe_calls', 'probe_failure_pct',
  'slow_rate_threshold', 'slow_rate_start',
];
// Settings with a default (an empty field means the default, not "off").
const DEFAULTS = { downgrade_rate: '100', probe_calls: '1', probe_failure_pct: '0' };
const COLORS = {
  visits: '#2563eb', downgrades: '#dc2626', exceptions: '#d97706',
  timeouts: '#7c3aed', max_concurrency: '#059669',
  p50_ns: '#0ea5e9', p90_ns: '#f59e0b', p99_ns: '#ef4444',
  faults: '#be185d', drill: 'rgba(190, 24, 93, 0.12)',
};
// One colour per host when a chart is broken down by host.
const HOST_COLORS = ['#2563eb', '#059669', '#d97706', '#7c3aed', '#dc2626', '#0891b2',
                     '#65a30d', '#db2777', '#4b5563', '#ea580c'];
const LIVE_S = 30;          // a host heard within this is live (the fleet's rule)
const TICK_MS = 1000;       // the state and the charts
const SLOW_TICKS = 5;       // the forms' tables, every this many ticks

const state = {
  apps: [], sel: null, info: null, active: null, charts: {}, byHost: {},
  drills: [], ticks: 0, busy: false, view: 'fleet',
};
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function setStatus(msg, isErr) {
  const s = $('status');
  s.textContent = msg;
  s.className = isErr ? 'err' : '';
}

// An action done: said, and an earlier refusal's banner goes.
function ok(msg) {
  setStatus(msg);
  $('error').hidden = true;
  $('error').textContent = '';
}

// An action refused: the API's own words (a 401 or 403 says which token
// is needed), in the status and in a banner that stays until the next
// action succeeds.  Nothing on the page changes.
function fail(e) {
  const msg = (e.status ? 'refused (HTTP ' + e.status + '): ' : '') + e.message;
  setStatus(msg, true);
  $('error').textContent = msg;
  $('error').hidden = false;
}

function token() { return $('token').value.trim(); }

async function api(method, path, body) {
  const opt = { method, headers: {} };
  const t = token();
  if (t) opt.headers.Authorization = 'Bearer ' + t;
  if (body !== undefined) {
    opt.headers['Content-Type'] = 'application/json';
    opt.body = JSON.stringify(body);
  }
  const r = await fetch(API + path, opt);
  let doc = null;
  try { doc = await r.json(); } catch (e) { doc = null; }
  if (!r.ok) {
    const msg = (doc && doc.error) ? doc.error : ('HTTP ' + r.status);
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return doc;
}

function appPath(a) {
  return '/groups/' + encodeURIComponent(a.group) + '/apps/' + encodeURIComponent(a.name);
}

function appHref(g, a) {
  return '#/app/' + encodeURIComponent(g) + '/' + encodeURIComponent(a);
}

function link(text, href) {
  const a = el('a', text);
  a.href = href;
  return a;
}

function fmtTime(t) {
  const d = new Date(t * 1000);
  return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

function fmtDate(t) {
  return new Date(t * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function fmtNs(ns) {
  if (ns >= 1e9) return (ns / 1e9).toFixed(2) + ' s';
  if (ns >= 1e6) return (ns / 1e6).toFixed(2) + ' ms';
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + ' µs';
  return ns + ' ns';
}

function fmtRate(n, s) {
  const r = n / s;
  return r >= 100 ? r.toFixed(0) : r.toFixed(1);
}

// The probes' estimated share of a CPU, as `sds-bpf stats` prints it.
function fmtPct(v) {
  return (v >= 10 ? v.toFixed(1) : v.toFixed(3)) + '%';
}

// An adaptive point's limit as a stats series gives it (docs/ADAPTIVE.md):
// of one host, or summed over the hosts that report one, with the highest
// latency steered by; '' when no host has one.
function fmtAdaptive(s) {
  if (!s || s.adaptive_limit === null || s.adaptive_limit === undefined) return '';
  const n = s.adaptive_limit_hosts;
  return 'limit ' + s.adaptive_limit + (n > 1 ? ' (adaptive, sum of ' + n + ' hosts)' : ' (adaptive)') +
    ', steering by ' + (n > 1 ? 'up to ' : '') + fmtNs(s.adaptive_latency_ns);
}

// Where a period's split calls' time went (docs/SPLIT.md), of step @k of
// stats series @s: three shares and a bar of them; '-' without split calls.
function fmtSplit(s, k) {
  if (!s || !s.split_calls || !s.split_calls[k]) return '-';
  const parts = [['on-CPU', s.split_on_cpu_ns[k], 'cpu'], ['run queue', s.split_runqueue_ns[k], 'rq'],
                 ['blocked', s.split_blocked_ns[k], 'blk']];
  const sum = parts.reduce((a, p) => a + p[1], 0) || 1;
  const bar = el('span', null, 'splitbar');
  for (const [, v, cls] of parts) {
    const x = el('span', null, cls);
    x.style.width = (100 * v / sum).toFixed(1) + '%';
    bar.appendChild(x);
  }
  bar.title = s.split_calls[k] + ' calls split';
  return span(bar, parts.map(([n, v]) => n + ' ' + (100 * v / sum).toFixed(1) + '%').join(' · '));
}

// A host's pressure rules as its last heartbeat said (docs/PRESSURE.md),
// named by the active strategies' rules: '-' without rules.
function fmtPressure(rules, defs) {
  if (!rules || !rules.length) return '-';
  return rules.map((r, i) => {
    const d = defs && defs[i];
    return 'rule ' + i + (d ? ' (' + d.resource + ' ' + d.kind + ' > ' + d.above_pct + '%)' : '') + ': ' +
      (r.firing ? 'firing' : 'quiet') + ', fired ' + r.fired + '×';
  }).join('; ');
}

function fillTable(id, rows) {
  const tb = $(id).querySelector('tbody');
  tb.replaceChildren();
  for (const cells of rows) {
    const tr = el('tr');
    for (const c of cells) {
      if (c instanceof Node) { const td = el('td'); td.appendChild(c); tr.appendChild(td); }
      else tr.appendChild(el('td', c));
    }
    tb.appendChild(tr);
  }
}

// Several nodes in one cell.
function span(...parts) {
  const s = el('span');
  for (const p of parts) s.appendChild(p instanceof Node ? p : document.createTextNode(String(p)));
  return s;
}

// ---- a confirmation with an audit comment ----------------------------------

let confirmAction = null;

// @what: {title, text, action(comment)}: Confirm runs it; a refusal stays
// in the dialog (and the banner), the dialog closes only on success.
function openConfirm(what) {
  confirmAction = what.action;
  $('ks-title').textContent = what.title;
  $('ks-text').textContent = what.text;
  $('ks-comment').value = '';
  $('ks-error').textContent = '';
  $('ks-dialog').showModal();
  $('ks-comment').focus();
}

async function confirmClicked() {
  const c = $('ks-comment').value.trim();
  if (!c) { $('ks-error').textContent = 'a comment is needed: it goes to the audit log'; return; }
  try {
    await confirmAction(c);
    $('ks-dialog').close();
  } catch (e) {
    $('ks-error').textContent = (e.status ? 'refused (HTTP ' + e.status + '): ' : '') + e.message;
    fail(e);
  }
}

// ---- pages -------------------------------------------------------------------

function route() {
  const m = location.hash.match(/^#\/app\/([^/]+)\/([^/]+)$/);
  if (m) {
    const g = decodeURIComponent(m[1]), a = decodeURIComponent(m[2]);
    state.view = 'app';
    $('fleet').hidden = true;
    $('app').hidden = false;
    if (!state.sel || state.sel.group !== g || state.sel.name !== a) selectApp({ group: g, name: a });
  } else {
    state.view = 'fleet';
    $('fleet').hidden = false;
    $('app').hidden = true;
  }
  markNav();
  tick(true);
}

function markNav() {
  const key = state.view === 'app' && state.sel ? state.sel.group + '/' + state.sel.name : '';
  for (const li of $('apps').children) li.className = li.dataset.key === key ? 'sel' : '';
}

async function loadApps() {
  const apps = await api('GET', '/apps');
  state.apps = apps;
  const ul = $('apps');
  ul.replaceChildren();
  for (const a of apps) {
    const li = el('li');
    li.appendChild(link(a.name, appHref(a.group, a.name)));
    li.appendChild(el('small', a.group + ' · ' + a.hosts + ' host' + (a.hosts === 1 ? '' : 's')));
    li.dataset.key = a.group + '/' + a.name;
    ul.appendChild(li);
  }
  markNav();
}

function selectApp(a) {
  state.sel = a;
  state.info = null;
  state.active = null;
  state.first = undefined;
  state.stats = null;
  state.refused = [];
  $('app-refused').replaceChildren();
  for (const k of Object.keys(state.charts)) state.charts[k].forEach((c) => c.destroy());
  state.charts = {};
  state.byHost = {};
  $('charts').replaceChildren();
  $('app-title').textContent = a.group + ' / ' + a.name;
  for (const id of ['points', 'hosts', 'schemes', 'ed-table', 'drills', 'copy-plans', 'gamedays', 'events', 'audit'])
    fillTable(id, []);
}

// Every second: the page shown; every SLOW_TICKS: the app's forms' tables
// and the list of apps.  A tick still running skips the next.
async function tick(now) {
  if (state.busy) {
    // An action's refresh is not lost: it runs when this tick ends.
    if (now === true) state.again = true;
    return;
  }
  state.busy = true;
  const slow = now === true || state.ticks++ % SLOW_TICKS === 0;
  try {
    if (slow) await loadApps();
    if (state.view === 'fleet') await loadFleet();
    else if (state.sel) await refreshApp(slow);
    if (slow || $('status').className !== 'err')
      setStatus('updated ' + new Date().toLocaleTimeString([], { hour12: false }));
  } catch (e) {
    setStatus(e.status === 401 ? 'reads need the token (--protect-reads): ' + e.message : e.message, true);
  } finally {
    state.busy = false;
    if (state.again) {
      state.again = false;
      tick(true);
    }
  }
}

// ---- one app -----------------------------------------------------------------

async function refreshApp(slow) {
  const a = state.sel;
  const p = appPath(a);
  const info = await api('GET', p);
  if (state.sel !== a) return;
  state.info = info;
  $('app-title').textContent = info.group + ' / ' + info.name;
  $('app-version').textContent = info.version;
  $('app-scheme').textContent = info.active_scheme;
  $('app-desc').textContent = info.description;
  if (slow) {
    // The app's first period (GET /fleet of this app): the charts start there.
    const f = await api('GET', '/fleet?group=' + encodeURIComponent(a.group) + '&app=' + encodeURIComponent(a.name));
    state.first = f.groups[0].apps[0].first_period;
    await loadSchemes(info);
    // Drills before the charts: they mark their periods, and the state says so.
    await loadDrills();
  }
  const [active, hosts, live, refused] = await Promise.all([
    api('GET', p + '/strategies'), api('GET', p + '/hosts'),
    api('GET', p + '/stats?step=10&from=' + (Math.floor(Date.now() / 10000) * 10 - 60)),
    api('GET', p + '/refused'),
    loadStats(),
  ]);
  if (state.sel !== a) return;
  state.active = active;
  state.refused = refused;
  // Refusals that name no point (a pressure rule, the split): by the version.
  $('app-refused').replaceChildren(...refused.filter((r) => !r.point).map((r) =>
    el('span', 'version ' + r.version + ' ' + r.text, 'refused')));
  loadHosts(info, hosts);
  loadPointsTable(live, active);
  if (slow)
    await Promise.all([loadEvents(), loadAudit(), loadEditorTable(), loadHotKeys(),
                       typeof loadCopy === 'function' ? loadCopy() : null,
                       typeof loadGamedays === 'function' ? loadGamedays() : null,
                       typeof loadDeps === 'function' ? loadDeps() : null]);
}

// ---- points: the state, the rates, the kill switch ---------------------------

function drillsOf(point) {
  const now = Date.now() / 1000;
  return state.drills.filter((d) => d.point === point && drillEnd(d) > now);
}

function refusedOf(point) {
  return (state.refused || []).filter((r) => r.point === point);
}

function isKilled(active, point) {
  const s = active && active.points[point];
  return !!s && s.visit_threshold === 0;
}

// One row per point with a strategy or a report in the last minute: its
// state and rates in the newest period reported (all hosts summed).
function loadPointsTable(live, active) {
  const names = new Set(Object.keys(live.points));
  for (const n of Object.keys(active.points)) names.add(n);
  fillTable('points', [...names].sort().map((name) => {
    const s = live.points[name];
    const k = s && s.as_of ? (s.as_of - live.from) / live.step : -1;
    const has = k >= 0 && k < s.t.length;
    const st = [];
    if (isKilled(active, name)) st.push(el('span', 'kill switch', 'kill'));
    for (const d of drillsOf(name)) st.push(el('span', 'drill ' + d.id + ': ' + d.kind + ' ' + d.ratio + '%', 'warn'));
    if (has && s.downgrades[k] > 0)
      st.push(el('span', 'downgrading ' + Math.round(100 * s.downgrades[k] / Math.max(1, s.visits[k])) + '%', 'warn'));
    if (s && s.suspended) st.push(el('span', 'suspended: overhead', 'warn'));
    if (has && s.overload && s.overload[k]) st.push(el('span', 'overload: a pressure rule shed it', 'warn'));
    // The admin's strategies a host refused for this point (GET refused).
    for (const r of refusedOf(name)) st.push(el('span', 'version ' + r.version + ' ' + r.text, 'refused'));
    if (!has) st.push(el('span', 'no report in the last minute', 'muted'));
    if (!st.length) st.push(el('span', 'ok', 'insync'));
    const cell = el('span', null, 'states');
    st.forEach((x) => cell.appendChild(x));
    const killed = isKilled(active, name);
    const b = el('button', killed ? 'Lift' : 'Kill switch', killed ? '' : 'danger');
    b.dataset.point = name;
    b.addEventListener('click', () => killSwitch(name, !killed));
    const step = live.step;
    return [name, cell,
            has ? fmtRate(s.visits[k], step) : '-', has ? fmtRate(s.downgrades[k], step) : '-',
            has ? fmtRate(s.exceptions[k], step) : '-', has ? fmtRate(s.timeouts[k], step) : '-',
            has ? fmtNs(s.p50_ns[k]) : '-', has ? fmtNs(s.p99_ns[k]) : '-',
            s ? fmtPct(s.overhead_pct) : '-', fmtAdaptive(s) || '-',
            has ? fmtSplit(s, k) : '-', has && s.max_stuck ? s.max_stuck[k] : '-',
            has ? fmtDate(s.as_of) : '', b];
  }));
}

// The kill switch as the API expresses it: the active scheme's strategy of
// the point with visit_threshold 0 and downgrade_rate 100, its other
// settings kept.  Lifting removes visit_threshold (a strategy left with
// nothing but the default downgrade_rate is deleted).
function killSwitch(point, on) {
  const info = state.info, a = state.sel;
  const scheme = info.active_scheme;
  const sp = appPath(a) + '/schemes/' + encodeURIComponent(scheme) + '/strategies';
  const path = sp + '/' + encodeURIComponent(point);
  openConfirm({
    title: (on ? 'Kill switch: ' : 'Lift the kill switch: ') + point,
    text: on ? 'Every call of ' + point + ' on every host of ' + info.group + '/' + info.name +
               ' is downgraded once the host has the new strategies version: the strategy of ' +
               point + ' in the active scheme ' + scheme + ' gets visit_threshold 0 and downgrade_rate 100.'
             : 'visit_threshold is removed from the strategy of ' + point + ' in the active scheme ' +
               scheme + ' of ' + info.group + '/' + info.name + '; its other settings stay.',
    action: async (comment) => {
      // The scheme's whole document, not the point's (a 404 when it has none).
      const cur = (await api('GET', sp)).points[point] || {};
      let r;
      if (on) {
        r = await api('PUT', path, Object.assign(cur, { visit_threshold: 0, downgrade_rate: 100, comment }));
      } else {
        delete cur.visit_threshold;
        const rest = Object.keys(cur).filter((k) => !(k === 'downgrade_rate' && cur[k] === 100));
        r = rest.length ? await api('PUT', path, Object.assign(cur, { comment }))
                        : await api('DELETE', path, { comment });
      }
      ok((on ? 'kill switch on ' : 'kill switch lifted on ') + point + ' (version ' + r.version +
         '): the hosts take it with the new version');
      tick(true);
    },
  });
}

// ---- hosts, events, audit ----------------------------------------------------

function loadHosts(info, hosts) {
  const now = Date.now() / 1000;
  let live = 0;
  fillTable('hosts', hosts.map((h) => {
    const age = Math.max(0, Math.round(now - h.last_seen));
    const isLive = age <= LIVE_S;
    if (isLive) live++;
    const v = el('span', h.version + (h.in_sync ? ' ✓' : ' (behind ' + info.version + ')'),
                 h.in_sync ? 'insync' : 'stale');
    // Its cluster shares (docs/CLUSTER.md): POINT visits / rate, as this admin granted them.
    const shares = Object.entries(h.shares || {}).map(([p, s]) =>
      p + ': ' + (s.visits >= 0 ? s.visits + ' visits' : '') +
      (s.visits >= 0 && s.token_rate >= 0 ? ', ' : '') +
      (s.token_rate >= 0 ? s.token_rate + '/s' : '') + (s.live ? '' : ' (not reporting)')).join('; ');
    return [h.host, h.ip, el('span', isLive ? 'live' : 'stale', isLive ? 'insync' : 'stale'),
            fmtDate(h.last_seen) + ' (' + age + ' s ago)', fmtDate(h.last_period), v,
            shares || '-', fmtPressure(h.pressure, state.active && state.active.pressure),
            (h.refused || []).map((r) => 'version ' + r.version + (r.point ? ' ' + r.point : '') +
                                  ': ' + r.reason).join('; ') || '-'];
  }));
  $('hosts-rule').textContent = 'live: a heartbeat within the last ' + LIVE_S + ' s; stale: none since.';
  $('app-hosts-sum').textContent = live + ' of ' + hosts.length + ' host' + (hosts.length === 1 ? '' : 's') + ' live';
}

async function loadEvents() {
  const ev = await api('GET', appPath(state.sel) + '/events?limit=50');
  fillTable('events', ev.map((e) => [fmtDate(e.period_start), e.host, e.point, e.downgrades, e.visits]));
}

async function loadAudit() {
  const au = await api('GET', appPath(state.sel) + '/audit?limit=50');
  fillTable('audit', au.map((e) => [fmtDate(e.time), e.action, e.detail, e.comment]));
}

// ---- the strategy editor -----------------------------------------------------

function buildFields() {
  const box = $('ed-fields');
  for (const f of FIELDS) {
    const l = el('label', f);
    const i = el('input');
    i.type = 'number';
    i.id = 'f-' + f;
    i.placeholder = DEFAULTS[f] || 'off';
    l.appendChild(i);
    box.appendChild(l);
  }
}

async function loadEditorTable() {
  const s = $('ed-scheme').value;
  if (!s) return null;
  const doc = await api('GET', appPath(state.sel) + '/schemes/' + encodeURIComponent(s) + '/strategies');
  const rows = [];
  const dl = $('ed-points');
  dl.replaceChildren();
  // Beside each strategy of the active scheme: what hosts refused of it.
  const active = state.info && s === state.info.active_scheme;
  for (const [pt, st] of Object.entries(doc.points)) {
    const why = active ? refusedOf(pt).map((r) => 'version ' + r.version + ' ' + r.text).join('; ') : '';
    rows.push([pt, el('code', JSON.stringify(st)), why ? el('span', why, 'refused') : '']);
    const o = el('option');
    o.value = pt;
    dl.appendChild(o);
  }
  fillTable('ed-table', rows);
  return doc;
}

async function loadPointIntoEditor() {
  const s = $('ed-scheme').value, pt = $('ed-point').value.trim();
  const doc = await loadEditorTable();
  const st = (doc && doc.points[pt]) || {};
  for (const f of FIELDS) $('f-' + f).value = st[f] !== undefined ? st[f] : '';
  setStatus(doc && doc.points[pt] ? 'loaded ' + pt + ' of ' + s : 'new strategy for ' + (pt || '?'));
}

async function saveStrategy() {
  const s = $('ed-scheme').value, pt = $('ed-point').value.trim();
  const body = {};
  for (const f of FIELDS) {
    const v = $('f-' + f).value.trim();
    if (v !== '') body[f] = Number(v);
  }
  const c = $('ed-comment').value;
  if (c) body.comment = c;
  try {
    // The point's priority (docs/PRESSURE.md) has no field here: kept as it is.
    const cur = await api('GET', appPath(state.sel) + '/schemes/' + encodeURIComponent(s) + '/strategies');
    const prio = cur.points[pt] && cur.points[pt].priority;
    if (prio) body.priority = prio;
    // Nor its hot keys' limits (key_overrides: the hot-keys panel's caps): kept.
    for (const f of ['key_capacity', 'key_visit_threshold', 'key_token_rate', 'key_token_bucket',
                     'key_overrides'])
      if (cur.points[pt] && cur.points[pt][f] !== undefined) body[f] = cur.points[pt][f];
    const r = await api('PUT', appPath(state.sel) + '/schemes/' + encodeURIComponent(s) +
                        '/strategies/' + encodeURIComponent(pt), body);
    ok('saved ' + pt + ' (version ' + r.version + ')');
    tick(true);
  } catch (e) { fail(e); }
}

async function deleteStrategy() {
  const s = $('ed-scheme').value, pt = $('ed-point').value.trim();
  try {
    const r = await api('DELETE', appPath(state.sel) + '/schemes/' + encodeURIComponent(s) +
                        '/strategies/' + encodeURIComponent(pt));
    ok('deleted ' + pt + ' (version ' + r.version + ')');
    tick(true);
  } catch (e) { fail(e); }
}

// ---- drills ------------------------------------------------------------------

function drillEnd(d) { return d.stopped_at !== null ? Math.min(d.stopped_at, d.expires_at) : d.expires_at; }

async function loadDrills() {
  state.drills = await api('GET', appPath(state.sel) + '/drills');
  const now = Date.now() / 1000;
  let running = 0;
  fillTable('drills', state.drills.map((d) => {
    const left = drillEnd(d) - now;
    const what = d.kind + ' ' + d.ratio + '%' + (d.kind === 'delay' ? ' ' + d.delay_ms + ' ms' : '') +
                 (d.errno ? ' ' + d.errno : '');
    let stop = '';
    if (left > 0) {
      running++;
      stop = el('button', 'Stop', 'danger');
      stop.addEventListener('click', () => stopDrill(d.id));
    }
    // Its blast radius ("all", or the hosts chosen), and why a stop condition ended it.
    const hosts = Array.isArray(d.hosts) ? d.hosts.join(', ') : (d.hosts || 'all');
    const conds = (d.stop_when || []).map((c) => c.field + ' > ' + c.above + ' / ' + c.window_s + ' s');
    return [d.id, d.point, what + (conds.length ? ' · stop if ' + conds.join(', ') : ''), hosts,
            fmtDate(d.created), left > 0 ? Math.round(left) + ' s' : 'ended', d.started_by,
            d.stopped_by || '', d.stop_reason || '', stop];
  }));
  $('drills-sum').textContent = running ? '· ' + running + ' running' : '';
}

async function startDrill() {
  const body = { point: $('dr-point').value.trim(), kind: $('dr-kind').value,
                 ratio: Number($('dr-ratio').value), duration_s: Number($('dr-for').value),
                 by: $('dr-by').value.trim() };
  if (body.kind === 'delay') body.delay_ms = Number($('dr-delay').value);
  // Empty: the point's own errno= (a guard point takes none).
  if (body.kind === 'error' && $('dr-errno').value) body.errno = $('dr-errno').value;
  // The blast radius: every host unless told; a share or a count of the live ones.
  const mode = $('dr-hosts-mode').value, hv = $('dr-hosts').value.trim();
  if (mode === 'hosts') body.hosts = hv.split(',').map((x) => x.trim()).filter((x) => x);
  else if (mode !== 'all') body[mode] = Number(hv);
  // A stop condition: the drill ends everywhere once it breaks.
  if ($('dr-stop-field').value)
    body.stop_when = [{ field: $('dr-stop-field').value, above: Number($('dr-stop-above').value),
                        window_s: Number($('dr-stop-window').value) }];
  try {
    const d = await api('POST', appPath(state.sel) + '/drills', body);
    ok('drill ' + d.id + ' started on ' + (Array.isArray(d.hosts) ? d.hosts.length + ' hosts' : 'every host') + ': it reaches them with their next heartbeat');
    tick(true);
  } catch (e) { fail(e); }
}

async function stopDrill(id) {
  const by = $('dr-by').value.trim();
  if (!by) { fail(new Error('say who stops it: fill in "by"')); return; }
  try {
    await api('POST', appPath(state.sel) + '/drills/' + id + '/stop', { by });
    ok('drill ' + id + ' stopped: the hosts stop it with their next heartbeat');
    tick(true);
  } catch (e) { fail(e); }
}

// 1 for the steps of @t (step @step) that a drill of @point overlapped.
function drillMask(point, t, step) {
  return t.map((x) => state.drills.some((d) => d.point === point && d.created < x + step &&
                                          drillEnd(d) > x) ? 1 : 0);
}

// ---- charts ------------------------------------------------------------------

function chartOptions(yTitle, y1) {
  const scales = {
    x: { ticks: { maxTicksLimit: 8, autoSkip: true } },
    y: { beginAtZero: true, title: { display: true, text: yTitle } },
  };
  if (y1) scales.y1 = { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false },
                        title: { display: true, text: y1 } };
  return {
    animation: false, responsive: true, maintainAspectRatio: false,
    interaction: { mode: 'index', intersect: false },
    plugins: { legend: { labels: { boxWidth: 12 } } },
    scales,
  };
}

function totalsDatasets() {
  return ['visits', 'downgrades', 'exceptions', 'timeouts', 'faults', 'max_concurrency'].map((k) => ({
    label: k === 'max_concurrency' ? 'concurrency' : k, key: k, data: [], borderColor: COLORS[k],
    backgroundColor: COLORS[k], pointRadius: 0, borderWidth: 1.5, yAxisID: k === 'max_concurrency' ? 'y1' : 'y',
  })).concat([{
    // Drill periods: a shaded band over the steps a drill overlapped.
    label: 'drill', key: 'drill', data: [], stepped: true, fill: true, pointRadius: 0,
    borderWidth: 0, backgroundColor: COLORS.drill, yAxisID: 'y',
  }]);
}

function latencyDatasets() {
  return ['p50_ns', 'p90_ns', 'p99_ns'].map((k) => ({
    label: k.replace('_ns', ''), key: k, data: [], borderColor: COLORS[k], backgroundColor: COLORS[k],
    pointRadius: 0, borderWidth: 1.5,
  }));
}

function ensureCard(name) {
  if (state.charts[name]) return state.charts[name];
  const card = el('div', null, 'chartcard');
  card.dataset.point = name;
  const head = el('div', null, 'row');
  head.appendChild(el('h4', name));
  const lab = el('label', 'by host ');
  const cb = el('input');
  cb.type = 'checkbox';
  cb.className = 'byhost';
  cb.addEventListener('change', () => {
    if (cb.checked) state.byHost[name] = null;
    else delete state.byHost[name];
    tick(true);
  });
  lab.appendChild(cb);
  head.appendChild(lab);
  card.appendChild(head);
  const sum = el('div', '', 'sum');
  card.appendChild(sum);
  const b1 = el('div', null, 'chartbox');
  const c1 = el('canvas');
  b1.appendChild(c1);
  card.appendChild(b1);
  const b2 = el('div', null, 'chartbox small');
  const c2 = el('canvas');
  b2.appendChild(c2);
  card.appendChild(b2);
  // The point's hot keys (docs/KEYS.md): hidden until some host sends keys.
  const hk = el('div', null, 'hotkeys');
  hk.hidden = true;
  hk.appendChild(el('div', '', 'sum'));
  const ht = el('table');
  const hh = el('tr');
  for (const c of ['key', 'kind', 'calls/s', 'errors/s', 'downgrades/s', 'calls', 'hosts', 'p99', 'cap'])
    hh.appendChild(el('th', c));
  ht.appendChild(el('thead')).appendChild(hh);
  ht.appendChild(el('tbody'));
  hk.appendChild(ht);
  card.appendChild(hk);
  $('charts').appendChild(card);
  const counts = new Chart(c1, {
    type: 'line', data: { labels: [], datasets: totalsDatasets() },
    options: chartOptions('calls per step', 'concurrency'),
  });
  const lat = new Chart(c2, {
    type: 'line', data: { labels: [], datasets: latencyDatasets() },
    options: chartOptions('latency (ms)'),
  });
  const entry = [counts, lat];
  entry.sum = sum;
  entry.hotkeys = hk;
  entry.mode = 'total';
  state.charts[name] = entry;
  return entry;
}

// ---- hot keys: each keyed point's heaviest keys, merged over hosts --------

const HOT_KEYS_S = 60;      // the last minute of periods

async function loadHotKeys() {
  const a = state.sel;
  const names = Object.keys(state.charts);
  const docs = await Promise.all(names.map((name) =>
    api('GET', appPath(a) + '/points/' + encodeURIComponent(name) + '/keys?period=' + HOT_KEYS_S)));
  if (state.sel !== a) return;
  names.forEach((name, i) => drawHotKeys(state.charts[name].hotkeys, docs[i]));
}

// Keys are text from the API (an integer, printable ASCII or 0x and hex):
// set as textContent, never as markup.  The last cell caps the key: its
// key_token_rate override in the active scheme's strategy of the point.
function drawHotKeys(box, doc) {
  box.hidden = !doc.keys.length;
  if (box.hidden) return;
  box.querySelector('.sum').textContent = 'hot keys, last ' + doc.period + ' s: ' + doc.periods +
    ' period' + (doc.periods === 1 ? '' : 's') + ' from ' + doc.hosts.length + ' host' +
    (doc.hosts.length === 1 ? '' : 's') + ' (each host\'s 10 heaviest a period)';
  const tb = box.querySelector('tbody');
  tb.replaceChildren(...doc.keys.map((k) => {
    const tr = el('tr');
    tr.dataset.key = k.key;
    for (const c of [k.key, k.kind, k.calls_per_s.toFixed(1), k.exceptions_per_s.toFixed(1),
                     k.downgrades_per_s.toFixed(1), k.calls, k.hosts,
                     k.p99_ns === null ? '-' : fmtNs(k.p99_ns)])
      tr.appendChild(el('td', c));
    tr.appendChild(capCell(doc.point, k));
    return tr;
  }));
}

// An override's key is the key's text (docs/KEYS.md "Limits"): an
// integer's decimal, a string's or bytes' text.  A key shown as hex (bytes
// not all printable) or (unreadable) has no text an override can name.
function cappable(k) {
  return k.kind === 'int' || ((k.kind === 'str' || k.kind === 'buf') && !/^0x([0-9a-f]{2})+$/.test(k.key));
}

function keyCap(point, key) {
  const s = state.active && state.active.points[point];
  const o = s && s.key_overrides && s.key_overrides[key];
  return o && o.key_token_rate > 0 ? o.key_token_rate : null;
}

function capCell(point, k) {
  const td = el('td', null, 'cap');
  if (!cappable(k)) {
    td.textContent = '-';
    return td;
  }
  const cap = keyCap(point, k.key);
  if (cap !== null) {
    td.appendChild(el('span', cap + '/s '));
    const b = el('button', 'remove cap', 'uncap');
    b.addEventListener('click', () => capKey(point, k.key, null));
    td.appendChild(b);
    return td;
  }
  const inp = el('input', null, 'caprate');
  inp.type = 'number';
  inp.min = '1';
  inp.placeholder = 'calls/s';
  const b = el('button', 'cap', 'capkey');
  b.addEventListener('click', () => {
    const n = Number(inp.value);
    if (!Number.isInteger(n) || n < 1) {
      fail(new Error('a cap is a whole number of calls a second, at least 1'));
      return;
    }
    capKey(point, k.key, n);
  });
  td.appendChild(inp);
  td.appendChild(b);
  return td;
}

// Cap one key of @point at @rate calls a second (null: remove its cap), in
// the active scheme's strategy of the point, its other settings and
// overrides kept; an override left with nothing goes.  The loaders take it
// with the new version; the key is failed fast or downgraded (reason
// key) while over its bucket.
function capKey(point, key, rate) {
  const info = state.info, a = state.sel;
  const scheme = info.active_scheme;
  const path = appPath(a) + '/schemes/' + encodeURIComponent(scheme) + '/strategies/' +
               encodeURIComponent(point);
  openConfirm({
    title: (rate !== null ? 'Cap key ' : 'Remove the cap of key ') + key + ' of ' + point,
    text: rate !== null
      ? 'Key ' + key + ' of ' + point + ' on every host of ' + info.group + '/' + info.name +
        ' passes at most ' + rate + ' calls a second once the host has the new strategies version:' +
        ' key_overrides["' + key + '"].key_token_rate ' + rate + ' in the active scheme ' + scheme + '.'
      : 'key_token_rate is removed from key_overrides["' + key + '"] of ' + point +
        ' in the active scheme ' + scheme + ' of ' + info.group + '/' + info.name + '.',
    action: async (comment) => {
      const sp = appPath(a) + '/schemes/' + encodeURIComponent(scheme) + '/strategies';
      const cur = (await api('GET', sp)).points[point] || {};
      const ov = cur.key_overrides || {};
      const o = ov[key] || {};
      if (rate !== null) {
        o.key_token_rate = rate;
        delete o.key_token_bucket;
        ov[key] = o;
      } else {
        delete o.key_token_rate;
        delete o.key_token_bucket;
        if (Object.keys(o).length) ov[key] = o;
        else delete ov[key];
      }
      if (Object.keys(ov).length) cur.key_overrides = ov;
      else delete cur.key_overrides;
      const r = await api('PUT', path, Object.assign(cur, { comment }));
      ok((rate !== null ? 'key ' + key + ' of ' + point + ' capped at ' + rate + '/s'
                        : 'cap of key ' + key + ' of ' + point + ' removed') +
         ' (version ' + r.version + '): the hosts take it with the new version');
      tick(true);
    },
  });
}

// Where the charts start: the app's first period unless the range's start
// is later, and at least a minute back, so that a new app's first period
// is not a dot.
function rangeFrom(to, range) {
  let from = to - range;
  if (state.first) from = Math.max(from, Math.floor(state.first / 10) * 10);
  return Math.min(from, to - 60);
}

// A store that does not say the first period (an extension's): the first
// step with anything in it, over every point, at least six steps back.
function firstStep(doc) {
  if (state.first !== null) return 0;
  let first = Infinity, n = 0;
  for (const s of Object.values(doc.points)) {
    n = s.t.length;
    for (let i = 0; i < s.t.length && i < first; i++)
      if (s.visits[i] || s.downgrades[i] || s.exceptions[i] || s.timeouts[i] || s.max_concurrency[i] ||
          (s.faults && s.faults[i])) { first = i; break; }
  }
  if (first === Infinity) first = n;
  return Math.max(0, Math.min(first, n - 6));
}

const SERIES = ['visits', 'exceptions', 'timeouts', 'downgrades', 'max_concurrency',
                'p50_ns', 'p90_ns', 'p99_ns', 'faults', 'delays'];
const FULL_MS = 60000;      // the whole range again this often (late periods)

// The range's statistics: the whole range when the app, the range or the
// app's first period changes, and once a minute; in between only its last three steps
// again (a heartbeat comes after its period) and the new ones, merged
// into the document kept, so that a second's update scans seconds, not
// the hour.
async function rangeStats(a, range, to, from0) {
  const c = state.stats;
  if (!c || c.app !== a || c.range !== range || c.first !== state.first || from0 < c.doc.from ||
      Date.now() - c.at > FULL_MS) {
    const doc = await api('GET', appPath(a) + '/stats?from=' + from0 + '&to=' + to);
    state.stats = { app: a, range, first: state.first, doc, at: Date.now() };
    return doc;
  }
  const doc = c.doc, step = doc.step;
  const inc = await api('GET', appPath(a) + '/stats?from=' + Math.max(doc.from, doc.to - 3 * step) +
                        '&to=' + Math.max(to, doc.to) + '&step=' + step);
  if (state.stats !== c) return doc;
  if (Object.keys(inc.points).some((p) => !doc.points[p])) {
    state.stats = null;         // a new point: the whole range for it
    return rangeStats(a, range, to, from0);
  }
  const n = (inc.to - inc.from) / step;
  for (const [p, s] of Object.entries(doc.points)) {
    const src = inc.points[p];
    for (let j = 0; j < n; j++) {
      const pos = (inc.from + j * step - doc.from) / step;
      if (pos === s.t.length) s.t.push(inc.from + j * step);
      for (const k of SERIES) {
        if (!s[k]) continue;
        s[k][pos] = src ? src[k][j] : 0;
      }
    }
    for (const k of ['visits', 'exceptions', 'timeouts', 'downgrades', 'faults', 'delays'])
      if (s[k]) s.total[k] = s[k].reduce((x, y) => x + y, 0);
    s.total.max_concurrency = Math.max(0, ...s.max_concurrency);
    // The newest state: the last three steps hold every host's latest (30 s).
    if (src)
      for (const k of ['adaptive_limit', 'adaptive_limit_hosts', 'adaptive_latency_ns'])
        if (k in src) s[k] = src[k];
  }
  doc.to = inc.to;
  return doc;
}

async function loadStats() {
  const a = state.sel;
  const range = Number($('range').value);
  const to = Math.ceil(Date.now() / 10000) * 10;
  const from0 = rangeFrom(to, range);
  const doc = await rangeStats(a, range, to, from0);
  const q = '?from=' + doc.from + '&to=' + doc.to;
  // The broken-down charts: one request each, over the same steps.
  const by = {};
  await Promise.all(Object.keys(state.byHost).map(async (name) => {
    by[name] = await api('GET', appPath(a) + '/stats/hosts' + q + '&step=' + doc.step +
                         '&point=' + encodeURIComponent(name));
  }));
  if (state.sel !== a) return;
  const i0 = firstStep(doc);
  const names = Object.keys(doc.points).sort();
  for (const name of names) {
    const s = doc.points[name];
    const entry = ensureCard(name);
    const t = s.t.slice(i0);
    const labels = t.map(fmtTime);
    if (by[name]) drawByHost(entry, by[name], i0, labels);
    else drawTotals(entry, name, s, i0, t, labels, doc.step);
    const tot = s.total;
    const lim = by[name] ? Object.keys(by[name].hosts).sort()
      .filter((h) => fmtAdaptive(by[name].hosts[h]))
      .map((h) => h + ': ' + fmtAdaptive(by[name].hosts[h])).join(' · ') : fmtAdaptive(s);
    entry.sum.textContent = 'step ' + doc.step + ' s · visits ' + tot.visits +
      ' · downgrades ' + tot.downgrades + ' · exceptions ' + tot.exceptions + ' · timeouts ' +
      tot.timeouts + ' · max concurrency ' + tot.max_concurrency + ' · p50 ' + fmtNs(tot.p50_ns) +
      ' · p99 ' + fmtNs(tot.p99_ns) + (tot.faults || tot.delays ?
      ' · drill faults ' + (tot.faults || 0) + ' · drill delays ' + (tot.delays || 0) : '') +
      (by[name] ? ' · by host: ' + Object.keys(by[name].hosts).length : '') + (lim ? ' · ' + lim : '');
  }
  const from = doc.from + i0 * doc.step;
  $('range-shown').textContent = 'shown: ' + fmtDate(from) + ' to now' +
    (i0 > 0 || from0 > to - range ? ' (since the app\'s first period)' : '') + ', step ' + doc.step +
    ' s, updated every second';
}

function drawTotals(entry, name, s, i0, t, labels, step) {
  const [counts, lat] = entry;
  if (entry.mode !== 'total') {
    counts.data.datasets = totalsDatasets();
    lat.data.datasets = latencyDatasets();
    entry.mode = 'total';
  }
  counts.data.labels = labels;
  const top = Math.max(1, ...s.visits.slice(i0));
  const mask = drillMask(name, t, step);
  for (const ds of counts.data.datasets)
    ds.data = ds.key === 'drill' ? mask.map((m) => m * top) : (s[ds.key] || s.t.map(() => 0)).slice(i0);
  counts.update('none');
  lat.data.labels = labels;
  for (const ds of lat.data.datasets) ds.data = s[ds.key].slice(i0).map((v) => v / 1e6);
  lat.update('none');
}

// Per host: visits (solid) and downgrades (dashed) on the counts chart,
// p99 on the latency chart, one colour per host.
function drawByHost(entry, doc, i0, labels) {
  const [counts, lat] = entry;
  const hosts = Object.keys(doc.hosts).sort();
  const mode = 'hosts:' + hosts.join(',');
  if (entry.mode !== mode) {
    const col = (i) => HOST_COLORS[i % HOST_COLORS.length];
    counts.data.datasets = hosts.flatMap((h, i) => [
      { label: h + ' visits', host: h, key: 'visits', data: [], borderColor: col(i), backgroundColor: col(i),
        pointRadius: 0, borderWidth: 1.5, yAxisID: 'y' },
      { label: h + ' downgrades', host: h, key: 'downgrades', data: [], borderColor: col(i),
        backgroundColor: col(i), borderDash: [4, 3], pointRadius: 0, borderWidth: 1.5, yAxisID: 'y' },
    ]);
    lat.data.datasets = hosts.map((h, i) => ({
      label: h + ' p99', host: h, key: 'p99_ns', data: [], borderColor: col(i), backgroundColor: col(i),
      pointRadius: 0, borderWidth: 1.5,
    }));
    entry.mode = mode;
  }
  counts.data.labels = labels;
  for (const ds of counts.data.datasets) ds.data = doc.hosts[ds.host][ds.key].slice(i0);
  counts.update('none');
  lat.data.labels = labels;
  for (const ds of lat.data.datasets) ds.data = doc.hosts[ds.host][ds.key].slice(i0).map((v) => v / 1e6);
  lat.update('none');
}

// ---- start -------------------------------------------------------------------

function start() {
  buildFields();
  const saved = sessionStorage.getItem('sds-token');
  if (saved) $('token').value = saved;
  $('token').addEventListener('change', () => { sessionStorage.setItem('sds-token', token()); tick(true); });
  $('range').addEventListener('change', () => tick(true));
  $('ed-load').addEventListener('click', () => loadPointIntoEditor().catch(fail));
  $('ed-scheme').addEventListener('change', () => loadEditorTable().catch(fail));
  $('dr-kind').addEventListener('change', () => { $('dr-errno').disabled = $('dr-kind').value !== 'error'; });
  $('ed-save').addEventListener('click', saveStrategy);
  $('ed-delete').addEventListener('click', deleteStrategy);
  $('dr-start').addEventListener('click', startDrill);
  $('dr-hosts-mode').addEventListener('change', () => { $('dr-hosts').disabled = $('dr-hosts-mode').value === 'all'; });
  if (typeof gamedayStart === 'function') gamedayStart();
  $('ks-confirm').addEventListener('click', confirmClicked);
  $('ks-cancel').addEventListener('click', () => $('ks-dialog').close());
  $('ks-comment').addEventListener('keydown', (e) => { if (e.key === 'Enter') confirmClicked(); });
  window.addEventListener('hashchange', route);
  route();
  setInterval(tick, TICK_MS);
}

// After every deferred script (fleet.js, schemes.js, copy.js) has run.
document.addEventListener('DOMContentLoaded', start);
