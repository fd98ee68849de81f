// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// sds-admin dashboard: an app's schemes (emergency plans): listed, created
// (empty or with another's strategies), deleted (with a confirmation and
// an audit comment), renamed (its strategies, and whether it is active,
// stay) and activated.  Uses app.js's helpers; app.js's refreshApp()
// calls loadSchemes().
'use strict';

async function loadSchemes(info) {
  const schemes = await api('GET', appPath(state.sel) + '/schemes');
  fillTable('schemes', schemes.map((sc) => {
    const acts = el('span', null, 'row');
    if (sc.active) {
      acts.appendChild(el('b', 'active', 'insync'));
    } else {
      const on = el('button', 'Activate');
      on.dataset.scheme = sc.name;
      on.className = 'activate';
      on.addEventListener('click', () => activateScheme(sc.name));
      const del = el('button', 'Delete', 'danger delete');
      del.dataset.scheme = sc.name;
      del.addEventListener('click', () => deleteScheme(sc.name));
      acts.append(on, del);
    }
    const cl = el('button', 'Clone');
    cl.addEventListener('click', () => {
      $('sc-clone').value = sc.name;
      $('sc-name').focus();
    });
    acts.appendChild(cl);
    return [sc.name, sc.description, sc.points, fmtDate(sc.created), acts];
  }));
  const fill = (id, withNone) => {
    const s = $(id);
    const keep = s.value;
    s.replaceChildren();
    if (withNone) { const o = el('option', 'none (empty)'); o.value = ''; s.appendChild(o); }
    for (const sc of schemes) {
      const o = el('option', sc.name + (sc.active ? ' (active)' : ''));
      o.value = sc.name;
      s.appendChild(o);
    }
    if (schemes.some((x) => x.name === keep) || (withNone && keep === '')) s.value = keep;
    else s.value = withNone ? '' : info.active_scheme;
  };
  fill('ed-scheme', false);
  fill('sc-clone', true);
  fill('sc-from', false);
}

async function renameScheme() {
  const from = $('sc-from').value, to = $('sc-to').value.trim();
  const body = { name: to };
  const c = $('scheme-comment').value;
  if (c) body.comment = c;
  try {
    await api('PATCH', appPath(state.sel) + '/schemes/' + encodeURIComponent(from), body);
    // The editor and the lists go on with the new name, before the next tick reads them.
    for (const id of ['ed-scheme', 'sc-clone', 'sc-from'])
      for (const o of $(id).options) if (o.value === from) { o.value = to; o.textContent = to; }
    ok('scheme ' + from + ' renamed ' + to);
    $('sc-to').value = '';
    tick(true);
  } catch (e) { fail(e); }
}

async function createScheme() {
  const body = { name: $('sc-name').value.trim() };
  const d = $('sc-desc').value, from = $('sc-clone').value, c = $('scheme-comment').value;
  if (d) body.description = d;
  if (from) body.clone_from = from;
  if (c) body.comment = c;
  try {
    const sc = await api('POST', appPath(state.sel) + '/schemes', body);
    ok('scheme ' + sc.name + ' created' + (from ? ' with the strategies of ' + from : '') +
       ': activate it to make the hosts enforce it');
    $('sc-name').value = '';
    tick(true);
  } catch (e) { fail(e); }
}

async function activateScheme(name) {
  const body = { scheme: name };
  const c = $('scheme-comment').value;
  if (c) body.comment = c;
  try {
    const r = await api('PUT', appPath(state.sel) + '/active_scheme', body);
    ok('active scheme ' + r.scheme + ' (version ' + r.version + '): the hosts take it with the new version');
    tick(true);
  } catch (e) { fail(e); }
}

function deleteScheme(name) {
  const a = state.sel;
  openConfirm({
    title: 'Delete scheme ' + name,
    text: 'The scheme ' + name + ' of ' + a.group + '/' + a.name + ' and its strategies are deleted.',
    action: async (comment) => {
      await api('DELETE', appPath(a) + '/schemes/' + encodeURIComponent(name), { comment });
      // Gone from the lists at once: the editor must not ask for it again.
      for (const id of ['ed-scheme', 'sc-clone', 'sc-from'])
        for (const o of [...$(id).options]) if (o.value === name) o.remove();
      ok('scheme ' + name + ' deleted');
      tick(true);
    },
  });
}

$('sc-create').addEventListener('click', createScheme);
$('sc-rename').addEventListener('click', renameScheme);
