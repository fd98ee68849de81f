// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// sds-admin dashboard: the fleet page (#/), the dashboard's first: every
// app by group with its hosts (live or stale), the points downgraded now
// and why, the drills and copy plans running, each linking to the app's
// page; and the forms that create a group or an app.  One request a
// second: GET /api/v1/fleet (admin/API.md).  Uses app.js's helpers.
'use strict';

function hostChips(app) {
  const box = el('span', null, 'chips');
  box.appendChild(el('b', app.live_hosts + ' live'));
  if (app.stale_hosts) box.appendChild(el('b', ' · ' + app.stale_hosts + ' stale', 'stale'));
  for (const h of app.hosts) {
    const c = el('span', h.host, 'chip ' + (h.live ? 'live' : 'stale'));
    c.title = (h.live ? 'live' : 'stale') + ', last heartbeat ' + fmtDate(h.last_seen) +
              ', strategies version ' + h.version + (h.in_sync ? ' (current)' : ' (behind ' + app.version + ')');
    box.appendChild(c);
  }
  if (!app.hosts.length) box.appendChild(el('span', 'no host yet', 'muted'));
  return box;
}

function downgradedCell(app) {
  const box = el('div', null, 'list');
  for (const d of app.downgraded) {
    const line = el('div', null, 'downgraded');
    line.dataset.point = d.point;
    line.appendChild(link(d.point, appHref(app.group, app.name)));
    line.appendChild(document.createTextNode(': ' + d.downgrades + ' of ' + d.visits + ' calls on ' +
                                             d.hosts.join(', ') + ' — '));
    line.appendChild(el('span', d.why.join('; '), 'why'));
    box.appendChild(line);
  }
  if (!app.downgraded.length) box.appendChild(el('span', 'none', 'muted'));
  return box;
}

function runningCell(app) {
  const box = el('div', null, 'list');
  const now = Date.now() / 1000;
  for (const d of app.drills) {
    const what = 'drill ' + d.id + ' on ' + d.point + ': ' + d.kind + ' ' + d.ratio + '%' +
                 (d.kind === 'delay' ? ' ' + d.delay_ms + ' ms' : '') + ', ' +
                 Math.max(0, Math.round(d.expires_at - now)) + ' s left';
    box.appendChild(el('div')).appendChild(link(what, appHref(app.group, app.name)));
  }
  for (const p of app.copy_plans) {
    const what = 'copy plan ' + p.id + ' (' + p.name + ') on ' + p.points.join(', ') + ': ' +
                 p.sample_pct + '% x' + p.amplification + ', ' +
                 Math.max(0, Math.round(p.expires_at - now)) + ' s left';
    box.appendChild(el('div')).appendChild(link(what, appHref(app.group, app.name)));
  }
  if (!app.drills.length && !app.copy_plans.length) box.appendChild(el('span', 'none', 'muted'));
  return box;
}

// The app's version and scheme, and the strategies its hosts refuse (issue 36).
function strategiesCell(app) {
  const box = el('div', null, 'list');
  box.appendChild(el('span', 'version ' + app.version + ' · scheme ' + app.active_scheme));
  for (const r of app.refused || [])
    box.appendChild(el('span', 'version ' + r.version + (r.point ? ' ' + r.point : '') + ' ' + r.text,
                       'refused block'));
  return box;
}

async function loadFleet() {
  const doc = await api('GET', '/fleet');
  if (state.view !== 'fleet') return;
  $('fleet-rule').textContent = 'A host is live when its last heartbeat is at most ' + doc.live_s +
    ' s old, else stale. Downgraded now: in the periods (10 s) of the last ' + doc.downgraded_s +
    ' s; why: what is in force there (drills, the active scheme\'s strategy).';
  const box = $('fleet-groups');
  box.replaceChildren();
  const dl = $('na-groups');
  dl.replaceChildren();
  let apps = 0;
  for (const g of doc.groups) {
    const o = el('option');
    o.value = g.name;
    dl.appendChild(o);
    const panel = el('div', null, 'panel group');
    panel.dataset.group = g.name;
    const head = el('div', null, 'row');
    head.appendChild(el('h3', g.name));
    if (g.description) head.appendChild(el('span', g.description, 'muted'));
    panel.appendChild(head);
    if (!g.apps.length) {
      panel.appendChild(el('p', 'no app yet', 'muted'));
      box.appendChild(panel);
      continue;
    }
    const t = el('table', null, 'fleet');
    const hr = el('tr');
    for (const h of ['app', 'hosts', 'downgraded now', 'drills and copy plans running', 'strategies'])
      hr.appendChild(el('th', h));
    t.appendChild(el('thead')).appendChild(hr);
    const tb = el('tbody');
    for (const a of g.apps) {
      apps++;
      const tr = el('tr');
      tr.dataset.app = a.group + '/' + a.name;
      const name = el('td');
      name.appendChild(link(a.name, appHref(a.group, a.name)));
      if (a.description) name.appendChild(el('small', a.description, 'muted block'));
      tr.appendChild(name);
      for (const c of [hostChips(a), downgradedCell(a), runningCell(a), strategiesCell(a)]) {
        const td = el('td');
        td.appendChild(c);
        tr.appendChild(td);
      }
      tb.appendChild(tr);
    }
    t.appendChild(tb);
    panel.appendChild(t);
    box.appendChild(panel);
  }
  $('empty').hidden = apps > 0;
}

async function createGroup() {
  const body = { name: $('ng-name').value.trim() };
  const d = $('ng-desc').value;
  if (d) body.description = d;
  try {
    const g = await api('POST', '/groups', body);
    ok('group ' + g.name + ' created');
    tick(true);
  } catch (e) { fail(e); }
}

async function createApp() {
  const g = $('na-group').value.trim();
  const body = { name: $('na-name').value.trim() };
  const d = $('na-desc').value;
  if (d) body.description = d;
  try {
    const a = await api('POST', '/groups/' + encodeURIComponent(g) + '/apps', body);
    ok('app ' + a.group + '/' + a.name + ' created, with its scheme default, active and empty');
    location.hash = appHref(a.group, a.name);
  } catch (e) { fail(e); }
}

$('ng-create').addEventListener('click', createGroup);
$('na-create').addEventListener('click', createApp);
