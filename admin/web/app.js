// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// sds-admin dashboard: plain JS, no build step.  Charts by Debian's
// libjs-chart.js (served by sds-admin under /javascript/).  Every piece of
// data reaches the page through textContent, never as HTML.
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

const state = { apps: [], sel: null, charts: {}, timer: null, drills: [] };
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

// The probes' estimated share of a CPU, as `sds-bpf stats` prints it.
function fmtPct(v) {
  return (v >= 10 ? v.toFixed(1) : v.toFixed(3)) + '%';
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

// ---- apps ------------------------------------------------------------------

async function loadApps() {
  const apps = await api('GET', '/apps');
  state.apps = apps;
  const ul = $('apps');
  ul.replaceChildren();
  for (const a of apps) {
    const li = el('li', a.name);
    li.appendChild(el('small', a.group + ' · ' + a.hosts + ' host' + (a.hosts === 1 ? '' : 's')));
    li.dataset.key = a.group + '/' + a.name;
    if (state.sel && state.sel.group === a.group && state.sel.name === a.name) li.className = 'sel';
    li.addEventListener('click', () => selectApp(a));
    ul.appendChild(li);
  }
  $('empty').hidden = apps.length > 0;
  if (!state.sel && apps.length) await selectApp(apps[0]);
  else if (state.sel) {
    const cur = apps.find((a) => a.group === state.sel.group && a.name === state.sel.name);
    if (cur) state.sel = cur;
  }
}

async function selectApp(a) {
  state.sel = a;
  for (const li of $('apps').children) li.className = li.dataset.key === a.group + '/' + a.name ? 'sel' : '';
  for (const k of Object.keys(state.charts)) { state.charts[k].forEach((c) => c.destroy()); }
  state.charts = {};
  $('charts').replaceChildren();
  $('app').hidden = false;
  await refreshApp(true);
}

async function refreshApp(full) {
  const a = state.sel;
  if (!a) return;
  const p = appPath(a);
  const info = await api('GET', p);
  $('app-title').textContent = info.group + ' / ' + info.name;
  $('app-version').textContent = info.version;
  $('app-desc').textContent = info.description;
  if (full) await loadSchemes(info);
  // Drills first: the charts mark their periods.
  await loadDrills();
  await Promise.all([loadHosts(info), loadStats(info), loadEvents(), loadAudit(), loadEditorTable(),
                     typeof loadCopy === 'function' ? loadCopy() : null]);
}

// ---- schemes and the editor ------------------------------------------------

async function loadSchemes(info) {
  const schemes = await api('GET', appPath(state.sel) + '/schemes');
  for (const id of ['scheme-active', 'ed-scheme']) {
    const s = $(id);
    const keep = s.value;
    s.replaceChildren();
    for (const sc of schemes) {
      const o = el('option', sc.name + (sc.active ? ' (active)' : ''));
      o.value = sc.name;
      s.appendChild(o);
    }
    s.value = id === 'scheme-active' ? info.active_scheme : (keep && schemes.some((x) => x.name === keep) ? keep : info.active_scheme);
  }
}

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
  if (!s) return;
  const doc = await api('GET', appPath(state.sel) + '/schemes/' + encodeURIComponent(s) + '/strategies');
  const rows = [];
  const dl = $('ed-points');
  dl.replaceChildren();
  for (const [pt, st] of Object.entries(doc.points)) {
    rows.push([pt, el('code', JSON.stringify(st))]);
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
    const r = await api('PUT', appPath(state.sel) + '/schemes/' + encodeURIComponent(s) +
                        '/strategies/' + encodeURIComponent(pt), body);
    setStatus('saved ' + pt + ' (version ' + r.version + ')');
    await refreshApp(false);
  } catch (e) { setStatus(e.message, true); }
}

async function deleteStrategy() {
  const s = $('ed-scheme').value, pt = $('ed-point').value.trim();
  try {
    const r = await api('DELETE', appPath(state.sel) + '/schemes/' + encodeURIComponent(s) +
                        '/strategies/' + encodeURIComponent(pt));
    setStatus('deleted ' + pt + ' (version ' + r.version + ')');
    await refreshApp(false);
  } catch (e) { setStatus(e.message, true); }
}

async function activateScheme() {
  const s = $('scheme-active').value;
  const body = { scheme: s };
  const c = $('scheme-comment').value;
  if (c) body.comment = c;
  try {
    const r = await api('PUT', appPath(state.sel) + '/active_scheme', body);
    setStatus('active scheme ' + r.scheme + ' (version ' + r.version + ')');
    await refreshApp(true);
  } catch (e) { setStatus(e.message, true); }
}

// ---- hosts, events, audit ----------------------------------------------------

async function loadHosts(info) {
  const hosts = await api('GET', appPath(state.sel) + '/hosts');
  const now = Date.now() / 1000;
  fillTable('hosts', hosts.map((h) => {
    const v = el('span', h.version + (h.in_sync ? ' ✓' : ' (behind ' + info.version + ')'),
                 h.in_sync ? 'insync' : 'stale');
    const age = Math.round(now - h.last_seen);
    return [h.host, h.ip, fmtDate(h.last_seen) + ' (' + age + ' s ago)', fmtDate(h.last_period), v];
  }));
}

async function loadEvents() {
  const ev = await api('GET', appPath(state.sel) + '/events?limit=50');
  fillTable('events', ev.map((e) => [fmtDate(e.period_start), e.host, e.point, e.downgrades, e.visits]));
}

async function loadAudit() {
  const au = await api('GET', appPath(state.sel) + '/audit?limit=30');
  fillTable('audit', au.map((e) => [fmtDate(e.time), e.action, e.detail, e.comment]));
}

// ---- drills ------------------------------------------------------------------

function drillEnd(d) { return d.stopped_at !== null ? Math.min(d.stopped_at, d.expires_at) : d.expires_at; }

async function loadDrills() {
  state.drills = await api('GET', appPath(state.sel) + '/drills');
  const now = Date.now() / 1000;
  fillTable('drills', state.drills.map((d) => {
    const left = drillEnd(d) - now;
    const what = d.kind + ' ' + d.ratio + '%' + (d.kind === 'delay' ? ' ' + d.delay_ms + ' ms' : '') +
                 (d.errno ? ' ' + d.errno : '');
    let stop = '';
    if (left > 0) {
      stop = el('button', 'Stop', 'danger');
      stop.addEventListener('click', () => stopDrill(d.id));
    }
    return [d.id, d.point, what, fmtDate(d.created),
            left > 0 ? Math.round(left) + ' s' : 'ended', d.started_by, d.stopped_by || '', stop];
  }));
}

async function startDrill() {
  const body = { point: $('dr-point').value.trim(), kind: $('dr-kind').value,
                 ratio: Number($('dr-ratio').value), duration_s: Number($('dr-for').value),
                 by: $('dr-by').value.trim() };
  if (body.kind === 'delay') body.delay_ms = Number($('dr-delay').value);
  // Empty: the point's own errno= (a guard point takes none).
  if (body.kind === 'error' && $('dr-errno').value) body.errno = $('dr-errno').value;
  try {
    const d = await api('POST', appPath(state.sel) + '/drills', body);
    setStatus('drill ' + d.id + ' started: it reaches the hosts with their next heartbeat');
    await refreshApp(false);
  } catch (e) { setStatus(e.message, true); }
}

async function stopDrill(id) {
  const by = $('dr-by').value.trim();
  if (!by) { setStatus('say who stops it: fill in "by"', true); return; }
  try {
    await api('POST', appPath(state.sel) + '/drills/' + id + '/stop', { by });
    setStatus('drill ' + id + ' stopped: the hosts stop it with their next heartbeat');
    await refreshApp(false);
  } catch (e) { setStatus(e.message, true); }
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

function ensureCard(name) {
  if (state.charts[name]) return state.charts[name];
  const card = el('div', null, 'chartcard');
  card.dataset.point = name;
  card.appendChild(el('h4', name));
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
  $('charts').appendChild(card);
  const counts = new Chart(c1, {
    type: 'line',
    data: { labels: [], datasets: ['visits', 'downgrades', 'exceptions', 'timeouts', 'faults', 'max_concurrency'].map((k) => ({
      label: k === 'max_concurrency' ? 'concurrency' : k, key: k, data: [], borderColor: COLORS[k],
      backgroundColor: COLORS[k], pointRadius: 0, borderWidth: 1.5, yAxisID: k === 'max_concurrency' ? 'y1' : 'y',
    })).concat([{
      // Drill periods: a shaded band over the steps a drill overlapped.
      label: 'drill', key: 'drill', data: [], stepped: true, fill: true, pointRadius: 0,
      borderWidth: 0, backgroundColor: COLORS.drill, yAxisID: 'y',
    }]) },
    options: chartOptions('calls per step', 'concurrency'),
  });
  const lat = new Chart(c2, {
    type: 'line',
    data: { labels: [], datasets: ['p50_ns', 'p90_ns', 'p99_ns'].map((k) => ({
      label: k.replace('_ns', ''), key: k, data: [], borderColor: COLORS[k], backgroundColor: COLORS[k],
      pointRadius: 0, borderWidth: 1.5,
    })) },
    options: chartOptions('latency (ms)'),
  });
  const entry = [counts, lat];
  entry.sum = sum;
  state.charts[name] = entry;
  return entry;
}

async function loadStats() {
  const range = Number($('range').value);
  const to = Math.ceil(Date.now() / 10000) * 10;
  const doc = await api('GET', appPath(state.sel) + '/stats?from=' + (to - range) + '&to=' + to);
  const names = Object.keys(doc.points).sort();
  for (const name of names) {
    const s = doc.points[name];
    const [counts, lat] = ensureCard(name);
    const labels = s.t.map(fmtTime);
    counts.data.labels = labels;
    const top = Math.max(1, ...s.visits);
    const mask = drillMask(name, s.t, doc.step);
    for (const ds of counts.data.datasets)
      ds.data = ds.key === 'drill' ? mask.map((m) => m * top) : (s[ds.key] || s.t.map(() => 0));
    counts.update();
    lat.data.labels = labels;
    for (const ds of lat.data.datasets) ds.data = s[ds.key].map((v) => v / 1e6);
    lat.update();
    const t = s.total;
    state.charts[name].sum.textContent = 'step ' + doc.step + ' s · visits ' + t.visits +
      ' · downgrades ' + t.downgrades + ' · exceptions ' + t.exceptions + ' · timeouts ' +
      t.timeouts + ' · max concurrency ' + t.max_concurrency + ' · p50 ' + fmtNs(t.p50_ns) +
      ' · p99 ' + fmtNs(t.p99_ns) + (t.faults || t.delays ?
      ' · drill faults ' + (t.faults || 0) + ' · drill delays ' + (t.delays || 0) : '');
  }
  loadPointsTable(doc, names);
}

// One row per point: its probe-budget state as of the newest heartbeat in
// the range that mentions it, and the range's totals.
function loadPointsTable(doc, names) {
  fillTable('points', names.map((name) => {
    const s = doc.points[name];
    const st = s.suspended ? el('span', 'suspended: overhead', 'warn') : el('span', 'ok');
    return [name, st, fmtPct(s.overhead_pct), s.total.visits, s.total.downgrades,
            s.as_of ? fmtDate(s.as_of) : ''];
  }));
}

// ---- start -------------------------------------------------------------------

async function tick() {
  try {
    await loadApps();
    if (state.sel) await refreshApp(false);
    setStatus('updated ' + new Date().toLocaleTimeString([], { hour12: false }));
  } catch (e) {
    setStatus(e.status === 401 ? 'reads need the token (--protect-reads)' : e.message, true);
  }
}

function start() {
  buildFields();
  const saved = sessionStorage.getItem('sds-token');
  if (saved) $('token').value = saved;
  $('token').addEventListener('change', () => { sessionStorage.setItem('sds-token', token()); tick(); });
  $('range').addEventListener('change', () => refreshApp(false).catch((e) => setStatus(e.message, true)));
  $('scheme-activate').addEventListener('click', activateScheme);
  $('ed-load').addEventListener('click', () => loadPointIntoEditor().catch((e) => setStatus(e.message, true)));
  $('ed-scheme').addEventListener('change', () => loadEditorTable().catch((e) => setStatus(e.message, true)));
  $('dr-kind').addEventListener('change', () => { $('dr-errno').disabled = $('dr-kind').value !== 'error'; });
  $('ed-save').addEventListener('click', saveStrategy);
  $('ed-delete').addEventListener('click', deleteStrategy);
  $('dr-start').addEventListener('click', startDrill);
  tick();
  state.timer = setInterval(tick, 10000);
}

start();
