// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// sds-admin dashboard: the Dependencies panel (issue 38, docs/DEPS.md).
// Loaded after app.js and uses its helpers (api, appPath, el, fillTable,
// fmtTime, state); app.js's refreshApp() calls loadDeps().  Every value
// is set as text, never as markup: addresses come from the hosts.
'use strict';

function depPeer(e) {
  return (e.addr.includes(':') ? '[' + e.addr + ']' : e.addr) + ':' + e.port;
}

async function loadDeps() {
  const a = state.sel;
  const doc = await api('GET', appPath(a) + '/deps');
  if (state.sel !== a) return;
  const rows = [];
  for (const p of doc.points)
    p.deps.forEach((e, i) => rows.push([i ? '' : p.point, depPeer(e), e.proto, e.hosts,
      e.connects, e.connect_errors, e.sends, e.send_errors, e.resets, e.class]));
  fillTable('deps', rows);
  const n = doc.hosts.length;
  $('deps-sum').textContent = n ?
    'since each loader attached, from ' + n + ' host' + (n === 1 ? '' : 's') +
    ' (the newest as of ' + fmtTime(Math.max(...doc.hosts.map((h) => h.updated))) + ')' :
    'no host sent dependencies: attach the loaders with --deps';
}
