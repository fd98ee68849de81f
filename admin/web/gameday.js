// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// sds-admin dashboard: the Game days panel (docs/GAMEDAY.md).  Loaded after
// app.js and uses its helpers (api, el, fillTable, fmtDate, fmtTime, ok,
// fail, state); app.js's refreshApp() calls loadGamedays(), its start()
// gamedayStart().
'use strict';

const gdState = { list: [] };

function gdPath(name) {
  return appPath(state.sel) + '/gamedays' + (name ? '/' + encodeURIComponent(name) : '');
}

function stepText(s) {
  if (s.do === 'drill') return 'drill ' + s.drill.point + ' ' + s.drill.kind + ' ' + (s.drill.ratio ?? 100) + '%';
  if (s.do === 'copy') return 'copy ' + s.plan;
  if (s.do === 'scheme') return 'scheme ' + s.scheme;
  if (s.do === 'stop') return 'stop' + (s.step !== undefined ? ' ' + s.step : '');
  if (s.for_s !== undefined) return 'wait ' + s.for_s + ' s';
  const u = s.until;
  return 'wait until ' + u.point + ' ' + u.field + (u.above !== undefined ? ' > ' + u.above : ' < ' + u.below);
}

function gdEvery(s) {
  for (const [u, n] of [['d', 86400], ['h', 3600], ['m', 60]])
    if (s % n === 0) return s / n + ' ' + u;
  return s + ' s';
}

function gdWhen(t) {
  return typeof t === 'number' ? fmtTime(t) + '.' + String(Math.round((t % 1) * 1000)).padStart(3, '0') : '';
}

async function loadGamedays() {
  gdState.list = await api('GET', gdPath());
  let running = 0;
  fillTable('gamedays', gdState.list.map((g) => {
    const btns = el('span');
    if (g.running) {
      running++;
      const b = el('button', 'Abort', 'danger');
      b.addEventListener('click', () => gdAct(g.name, 'abort'));
      btns.appendChild(b);
    } else {
      const b = el('button', 'Run now', 'danger');
      b.addEventListener('click', () => gdAct(g.name, 'run'));
      btns.appendChild(b);
    }
    const del = el('button', 'Delete');
    del.addEventListener('click', () => gdDelete(g.name));
    btns.appendChild(del);
    const last = g.running ? 'run ' + g.running + ' running' : '';
    return [g.name, g.steps.map(stepText).join(' → '),
            g.schedule ? 'every ' + gdEvery(g.schedule.every_s) : 'when asked',
            g.next_run ? fmtDate(g.next_run) : '', last, btns];
  }));
  $('gd-sum').textContent = running ? '· ' + running + ' running' : '';
  await loadGamedayReport();
}

// The newest run of the game days, its report: every step's times, the milestones.
async function loadGamedayReport() {
  const box = $('gd-report');
  let best = null;
  for (const g of gdState.list) {
    const reps = await api('GET', gdPath(g.name) + '/reports');
    if (reps.length && (!best || reps[0].started_at > best.started_at ||
                        (reps[0].started_at === best.started_at && reps[0].run > best.run)))
      best = reps[0];
  }
  if (!best) { box.replaceChildren(el('span', 'no run yet')); return; }
  const head = el('div', 'last report: ' + best.gameday + ' run ' + best.run + ' · ' +
                  (best.result || 'running') + ' · started ' + fmtDate(best.started_at) + ' by ' + best.started_by);
  head.className = 'gd-head';
  const table = el('table');
  table.id = 'gd-steps-table';
  const tb = el('tbody');
  (best.steps || []).forEach((s, i) => {
    const tr = el('tr');
    for (const c of [i, s.do, gdWhen(s.started_at), gdWhen(s.ended_at), s.result || ''])
      tr.appendChild(el('td', c));
    tb.appendChild(tr);
  });
  table.appendChild(tb);
  const m = [];
  if (best.fault) m.push('fault began ' + (best.fault.first_period ? fmtDate(best.fault.first_period) : gdWhen(best.fault.at)));
  if (best.first_trip) m.push('first trip ' + best.first_trip.point + ' ' + fmtDate(best.first_trip.period_start));
  if (best.scheme_switch) m.push('scheme → ' + best.scheme_switch.scheme + ' ' + gdWhen(best.scheme_switch.at));
  if (best.recovered) m.push('recovered ' + fmtDate(best.recovered.period_start));
  const ms = el('div', m.join(' · '));
  ms.id = 'gd-milestones';
  box.replaceChildren(head, table, ms);
}

async function gdAct(name, what) {
  const by = $('gd-by').value.trim();
  try {
    const r = await api('POST', gdPath(name) + '/' + what, by ? { by } : {});
    ok(what === 'run' ? 'game day ' + name + ': run ' + r.run + ' started' : 'game day ' + name + ': aborting');
    tick(true);
  } catch (e) { fail(e); }
}

async function gdDelete(name) {
  try {
    await api('DELETE', gdPath(name), {});
    ok('game day ' + name + ' deleted');
    tick(true);
  } catch (e) { fail(e); }
}

async function gdSave() {
  let steps;
  try {
    steps = JSON.parse($('gd-steps').value);
  } catch (e) { fail(new Error('steps: not JSON: ' + e.message)); return; }
  const body = { name: $('gd-name').value.trim(), steps, keep: Number($('gd-keep').value) };
  const every = $('gd-every').value.trim(), from = $('gd-from').value.trim();
  if (every) {
    body.schedule = { every: /^\d+$/.test(every) ? Number(every) : every };
    if (from) body.schedule.from = /^\d+$/.test(from) ? Number(from) : from;
  }
  if ($('gd-by').value.trim()) body.by = $('gd-by').value.trim();
  try {
    await api('POST', gdPath(), body);
    ok('game day ' + body.name + ' saved');
    tick(true);
  } catch (e) { fail(e); }
}

function gamedayStart() {
  $('gd-save').addEventListener('click', gdSave);
}
