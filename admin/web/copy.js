// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// sds-admin dashboard: the Copy panel (issue 12).  Loaded after app.js and
// uses its helpers (api, el, fillTable, fmtDate, fmtTime, ok, fail,
// chartOptions, state); app.js's refreshApp() calls loadCopy().
'use strict';

const COPY_COLORS = {
  captured: '#2563eb', dropped: '#dc2626', received: '#059669',
  dispatched: '#7c3aed', shadow_errors: '#d97706',
};
const COPY_SERIES = ['captured', 'dropped', 'received', 'dispatched', 'shadow_errors'];
const copyState = { plans: [], charts: {} };

function splitList(s) {
  return s.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
}

function planWhat(p) {
  const ramp = p.ramp ? ' (ramp ' + p.ramp.from + '→' + p.ramp.to + ' +' + p.ramp.step +
    ' every ' + p.ramp.every_s + ' s)' : '';
  return p.sample_pct + '% · x' + p.amplification + ramp + ' ' + p.framing +
    (p.writes ? ' · writes too' : '') + (p.rate ? ' · ≤ ' + p.rate + '/s' : '') +
    (p.diff ? ' · diff' : '');
}

// A diff plan's judged pairs (issue 37): totals, per point, first differences.
function diffText(d) {
  return d.pairs + ' pairs: ' + d.same + ' same, ' + d.different + ' different, ' +
    d.shadow_errors + ' shadow errors, ' + d.timeouts + ' timeouts, ' +
    d.unpaired + ' without a production response';
}

function renderDiff(box, d) {
  box.replaceChildren(el('div', 'diff: ' + diffText(d), 'diffsum'));
  for (const pt of d.points) {
    box.appendChild(el('div', pt.point + ': ' + pt.pairs + ' pairs, ' + pt.same + ' same, ' +
                       pt.different + ' different, ' + pt.shadow_errors + ' shadow errors, ' +
                       pt.timeouts + ' timeouts', 'diffpoint'));
    for (const e of pt.examples) {
      box.appendChild(el('div', '  ' + e.path + ': production ' + e.recorded + ', shadow ' +
                         e.shadow, 'diffex'));
    }
  }
}

// A ramp's progress and, once a step broke a condition, its knee.
function rampText(p) {
  const r = p.ramp_result;
  if (!r) return 'ramp: at x' + p.amplification + ', no step judged yet';
  let t = 'ramp: ' + (r.state || '') + ' at x' + p.amplification;
  if (r.knee) {
    const k = r.knee;
    t += ' · knee x' + k.amplification + ': p99 ' + k.p99_ms_before + ' → ' + k.p99_ms_at +
      ' ms, error rate ' + k.error_rate_before + ' → ' + k.error_rate_at;
  }
  if (r.reason) t += ' · ' + r.reason;
  return t;
}

function shadowText(s) {
  return typeof s === 'string' ? s : s.addr + (s.weight ? ' ×' + s.weight : '');
}

async function loadCopy() {
  copyState.plans = await api('GET', appPath(state.sel) + '/copy-plans');
  const now = Date.now() / 1000;
  fillTable('copy-plans', copyState.plans.map((p) => {
    let stop = '';
    if (p.state === 'active') {
      stop = el('button', 'Stop', 'danger');
      stop.addEventListener('click', () => stopCopy(p.id));
    }
    const st = el('span', p.state, p.state === 'active' ? 'insync' : 'muted');
    const left = p.state === 'active' ? Math.round(p.expires_at - now) + ' s left' : fmtDate(p.stopped_at || p.expires_at);
    return [p.id, p.name, p.points.join(', '), planWhat(p), p.shadows.map(shadowText).join(', '),
            st, left, p.started_by, p.stopped_by || '', stop];
  }));
  const running = copyState.plans.filter((p) => p.state === 'active').length;
  $('copy-sum').textContent = running ? '· ' + running + ' running' : '';
  // Charts for the plans in the list, newest first; others go.
  const ids = new Set(copyState.plans.map((p) => String(p.id)));
  for (const id of Object.keys(copyState.charts)) {
    if (ids.has(id)) continue;
    copyState.charts[id].chart.destroy();
    copyState.charts[id].card.remove();
    delete copyState.charts[id];
  }
  await Promise.all(copyState.plans.slice(0, 8).map(loadCopyStats));
}

function copyCard(p) {
  const key = String(p.id);
  if (copyState.charts[key]) return copyState.charts[key];
  const card = el('div', null, 'chartcard');
  card.dataset.plan = key;
  card.appendChild(el('h4', 'copy plan ' + p.id + ' · ' + p.name));
  const sum = el('div', '', 'sum');
  card.appendChild(sum);
  const extra = el('div', '', 'copyextra');
  card.appendChild(extra);
  const box = el('div', null, 'chartbox');
  const c = el('canvas');
  box.appendChild(c);
  card.appendChild(box);
  $('copy-charts').appendChild(card);
  const chart = new Chart(c, {
    type: 'line',
    data: { labels: [], datasets: COPY_SERIES.map((k) => ({
      label: k.replace('_', ' '), key: k, data: [], borderColor: COPY_COLORS[k],
      backgroundColor: COPY_COLORS[k], pointRadius: 0, borderWidth: 1.5,
    })) },
    options: chartOptions('requests per period'),
  });
  copyState.charts[key] = { card, chart, sum, extra };
  return copyState.charts[key];
}

// One plan's periods over the range: gaps are periods nobody reported.
async function loadCopyStats(p) {
  const range = Number($('range').value);
  const to = Math.ceil(Date.now() / 10000) * 10;
  const doc = await api('GET', appPath(state.sel) + '/copy-plans/' + p.id +
                        '/stats?from=' + (to - range) + '&to=' + to);
  const { chart, sum, extra } = copyCard(p);
  if (p.diff || p.ramp) {
    const full = await api('GET', appPath(state.sel) + '/copy-plans/' + p.id);
    extra.replaceChildren();
    if (full.ramp) extra.appendChild(el('div', rampText(full), 'ramp'));
    if (full.diff_result) {
      const box = el('div', '', 'diff');
      renderDiff(box, full.diff_result);
      extra.appendChild(box);
    }
  }
  chart.data.labels = doc.periods.map((x) => fmtTime(x.period_start));
  const total = {};
  for (const ds of chart.data.datasets) {
    ds.data = doc.periods.map((x) => x[ds.key]);
    total[ds.key] = ds.data.reduce((a, b) => a + b, 0);
  }
  chart.update();
  sum.textContent = COPY_SERIES.map((k) => k.replace('_', ' ') + ' ' + total[k]).join(' · ');
}

async function startCopy() {
  const body = {
    name: $('cp-name').value.trim(), points: splitList($('cp-points').value),
    sample_pct: Number($('cp-pct').value), amplification: Number($('cp-amp').value),
    shadows: splitList($('cp-shadows').value), framing: $('cp-framing').value,
    writes: $('cp-writes').checked, duration_s: Number($('cp-for').value),
    by: $('cp-by').value.trim(),
  };
  if ($('cp-diff').checked) {
    body.diff = true;
    const ign = splitList($('cp-ignore').value);
    if (ign.length) body.ignore = ign;
  }
  try {
    const p = await api('POST', appPath(state.sel) + '/copy-plans', body);
    ok('copy plan ' + p.id + ' started: hosts and copy servers take it with their next heartbeat');
    await loadCopy();
  } catch (e) { fail(e); }
}

async function stopCopy(id) {
  const by = $('cp-by').value.trim();
  if (!by) { fail(new Error('say who stops it: fill in "by"')); return; }
  try {
    await api('POST', appPath(state.sel) + '/copy-plans/' + id + '/stop', { by });
    ok('copy plan ' + id + ' stopped: it leaves the hosts and copy servers with their next heartbeat');
    await loadCopy();
  } catch (e) { fail(e); }
}

$('cp-start').addEventListener('click', startCopy);
