// The Xash3D server browser: /api/servers every 5 s, sortable by any column, filtered,
// favourites and recently viewed servers; a click on a name opens the server's details
// (serverdetail.ts). The view is kept in the URL (serverview.ts).

import { $, h, ago, getJson, poller, copyText } from './util';
import * as sv from './serverview';
import { type Server, type Key, type View, nameOf, collator } from './serverview';
import type { components } from './api.gen';
import { initDetails, openDetail, refreshDetail, detailRow, copyJoin, detailHooks } from './serverdetail';

type Servers = components['schemas']['ServersBody'];

const COLS = 10;
/**
 * Rows drawn at a time: a table of 10,000 rows took 0.5 to 1.5 s to rebuild in Chromium
 * (on every refresh and sort); 500 take a twentieth of that. "Show more" draws 500 more.
 */
const PAGE = 500;
let limit = PAGE;
let data: Servers | null = null;
let byAddress = new Map<string, Server>();
let v: View = sv.defaults();
let loaded = false;
let active: () => boolean = () => false;

/** A server in the favourites or recent view that the master does not list now. */
interface Gone { address: string; gone: true }
type Row = Server | Gone;
const isGone = (r: Row): r is Gone => 'gone' in r;

/** The rows the view shows, in order. */
function rows(): Row[] {
  if (!data) return [];
  const text = v.q.trim().toLowerCase();
  const pick = v.show === 'fav' ? sv.favourites : v.show === 'recent' ? new Set(sv.recent) : null;
  const source = pick ? [...pick].flatMap((a) => byAddress.get(a) ?? []) : data.servers;
  const list = sv.sorted(source.filter((s) => sv.passes(s, v, text)), v, sv.favourites, sv.recent);
  if (!pick || sv.filtered(v)) return list;
  // Favourites and recent servers the master does not list now stay in their view.
  const order = v.show === 'recent' ? sv.recent : [...pick].sort(collator.compare);
  const gone: Gone[] = order.filter((a) => !byAddress.has(a) && (!text || a.toLowerCase().includes(text))).map((a) => ({ address: a, gone: true }));
  return [...list, ...gone];
}

function star(addr: string, name: string): HTMLElement {
  const on = sv.favourites.has(addr);
  return h('td', { class: 'fav' }, h('button', {
    class: 'star', type: 'button', 'aria-pressed': on ? 'true' : 'false', 'data-star': addr,
    'aria-label': on ? `Remove ${name} from favourites` : `Add ${name} to favourites`, title: on ? 'favourite' : 'add to favourites',
  }, on ? '★' : '☆'));
}

function addressCell(addr: string): HTMLElement {
  return h('td', { class: 'address' }, h('span', { class: 'addr' }, addr),
    h('button', { class: 'copy', type: 'button', 'data-copy': addr, 'aria-label': `Copy ${addr}` }, 'copy'));
}

function serverRow(s: Server, now: number): HTMLElement {
  return h('tr', { 'data-address': s.address, 'aria-expanded': v.open === s.address ? 'true' : 'false' },
    star(s.address, nameOf(s)),
    h('td', { class: 'name', title: s.password ? 'password required' : null }, nameOf(s), s.password ? ' (password)' : ''),
    h('td', { class: 'map' }, s.map),
    h('td', { class: 'players num' }, `${s.players}/${s.max}`, s.bots ? ` +${s.bots} bots` : ''),
    h('td', { class: 'ping num', title: "the master's round trip at its last probe" }, s.ping_ms === null || s.ping_ms === undefined ? '–' : `${Math.round(s.ping_ms)} ms`),
    h('td', { class: 'gamedir' }, s.gamedir),
    h('td', { class: 'nat' }, s.nat ? 'yes' : 'no'),
    h('td', { class: 'version' }, s.version),
    h('td', { class: 'since', title: new Date(s.registered_since * 1000).toISOString() }, ago(s.registered_since, now)),
    addressCell(s.address));
}

function goneRow(addr: string): HTMLElement {
  return h('tr', { 'data-address': addr, class: 'gone', 'aria-expanded': v.open === addr ? 'true' : 'false' },
    star(addr, addr), h('td', { class: 'name', title: 'the master does not list this server now' }, addr, ' (not listed now)'),
    ...['map', 'players num', 'ping num', 'gamedir', 'nat', 'version', 'since'].map((c) => h('td', { class: c }, '–')),
    addressCell(addr));
}

function render() {
  const table = $('servers');
  const sel = document.getSelection();
  // Someone is selecting an address to copy it: do not pull the text from under them.
  if (sel && !sel.isCollapsed && sel.anchorNode && table.contains(sel.anchorNode)) return;
  for (const th of table.querySelectorAll('th')) {
    const k = th.getAttribute('data-key');
    if (k === v.sort) th.setAttribute('aria-sort', v.dir > 0 ? 'ascending' : 'descending');
    else th.removeAttribute('aria-sort');
  }
  const tbody = table.querySelector('tbody')!;
  if (!data) { tbody.replaceChildren(); return; }
  const now = data.generated_at;
  const list = rows();
  // The open server is drawn even past the limit (a link may name it).
  const at = v.open ? list.findIndex((r) => r.address === v.open) : -1;
  const drawn = list.slice(0, Math.max(limit, at + 1));
  const trs: HTMLElement[] = [];
  for (const r of drawn) {
    trs.push(isGone(r) ? goneRow(r.address) : serverRow(r, now));
    if (v.open === r.address) trs.push(detailRow(r.address, isGone(r) ? null : r, COLS, now));
  }
  tbody.replaceChildren(...trs);
  const listed = list.filter((r) => !isGone(r)).length;
  const gone = list.length - listed;
  $('server-count').textContent = `${listed} shown / ${data.total} listed${gone ? ` (+${gone} not listed now)` : ''}`;
  const more = $('servers-more');
  more.hidden = drawn.length >= list.length;
  if (!more.hidden) more.querySelector('span')!.textContent = `${drawn.length} of ${list.length} rows drawn`;
  const note = $('servers-note');
  if (data.servers.length && !list.length) {
    note.textContent = v.show === 'fav' ? (sv.favourites.size ? 'No favourite passes the filters.' : 'No favourites yet: the ☆ in a row adds one.')
      : v.show === 'recent' ? (sv.recent.length ? 'No recently viewed server passes the filters.' : 'No server viewed yet: a name opens its details.')
        : 'No server passes the filters.';
  } else if (data.servers.length) note.textContent = '';
}

/** The options of a select: `all` first, then `values`, keeping the view's choice even before the list names it. */
function options(sel: HTMLSelectElement, all: string, values: string[], keep: string) {
  const want = [...new Set([...values, ...(keep ? [keep] : [])])].sort(collator.compare);
  const have = [...sel.options].slice(1).map((o) => o.value);
  if (want.join('\n') !== have.join('\n')) sel.replaceChildren(h('option', { value: '' }, all), ...want.map((g) => h('option', { value: g }, g)));
  sel.value = keep;
}

function choices() {
  const list = data?.servers ?? [];
  options($('gamedir') as HTMLSelectElement, 'all games', list.map((s) => s.gamedir), v.gamedir);
  options($('map-filter') as HTMLSelectElement, 'all maps', list.filter((s) => !v.gamedir || s.gamedir === v.gamedir).map((s) => s.map), v.map);
}

/** Sets the controls from the view. */
function controls() {
  const set = (id: string, val: string) => { const el = $(id) as HTMLInputElement; if (el.value !== val) el.value = val; };
  set('server-filter', v.q);
  set('proto-filter', v.proto);
  set('show-filter', v.show);
  for (const f of ['notfull', 'notempty', 'nopass'] as const) ($(`f-${f}`) as HTMLInputElement).checked = v[f];
  choices();
}

/** Writes the view into the URL (replacing the entry: the back button leaves the page's view, not each keystroke). */
function remember() {
  if (!active()) return;
  const q = sv.format(v);
  const want = `#servers${q ? `?${q}` : ''}`;
  if (location.hash !== want) history.replaceState(history.state, '', want);
}

function changed() {
  remember();
  render();
}

function open(addr: string | null) {
  v.open = addr;
  if (addr) { sv.viewed(addr); openDetail(addr, data?.generated_at ?? Math.floor(Date.now() / 1000)); }
}

async function refresh() {
  const r = await getJson<Servers>('/api/servers');
  const note = $('servers-note');
  if (r.absent) {
    data = null;
    byAddress = new Map();
    note.textContent = 'No Xash3D master runs in this process: not running here.';
  } else if (!r.body || r.error) {
    note.textContent = `Could not read the server list (${r.error ?? 'no body'}); retrying.`;
    return;
  } else {
    data = r.body;
    byAddress = new Map(data.servers.map((s) => [s.address, s]));
    note.textContent = data.servers.length ? '' : 'No server is registered with the master yet.';
  }
  loaded = true;
  if (v.open) refreshDetail(v.open);
  choices();
  render();
}

/**
 * The hash's query after `#servers` (the text after `?`): a link or the back button
 * sets the view from it; a bare `#servers` (the tab) keeps the view as it was.
 */
export function serversFromHash(query: string | null) {
  if (query === null) { remember(); return; }
  const was = v.open;
  v = sv.parse(query);
  if (v.open && v.open !== was) open(v.open);
  controls();
  render();
}

export function initServers(isVisible: () => boolean): () => void {
  active = isVisible;
  initDetails(render);
  const start = poller(refresh, 5000, isVisible);
  $('servers').querySelector('thead')!.addEventListener('click', (e) => {
    const th = (e.target as HTMLElement).closest('th');
    const k = th?.getAttribute('data-key') as Key | null;
    if (!k) return;
    if (v.sort === k) v.dir = v.dir > 0 ? -1 : 1; else { v.sort = k; v.dir = 1; }
    changed();
  });
  $('servers').querySelector('tbody')!.addEventListener('click', (e) => {
    const t = e.target as HTMLElement;
    const star = t.closest('button.star');
    if (star) { sv.toggleFavourite(star.getAttribute('data-star') ?? ''); render(); return; }
    const join = t.closest('button.copy-join');
    if (join) { void copyJoin(join as HTMLElement); return; }
    const b = t.closest('button.copy');
    if (b) { void copyText(b as HTMLElement, b.getAttribute('data-copy') ?? '', b.previousElementSibling); return; }
    // A click on a server's name opens (or closes) its details.
    const addr = t.closest('td.name')?.parentElement?.getAttribute('data-address');
    if (!addr) return;
    open(v.open === addr ? null : addr);
    changed();
  });
  $('servers-more').querySelector('button')!.addEventListener('click', () => { limit += PAGE; render(); });
  $('server-filter').addEventListener('input', (e) => { v.q = (e.target as HTMLInputElement).value; changed(); });
  $('gamedir').addEventListener('change', (e) => { v.gamedir = (e.target as HTMLSelectElement).value; choices(); changed(); });
  $('map-filter').addEventListener('change', (e) => { v.map = (e.target as HTMLSelectElement).value; changed(); });
  $('proto-filter').addEventListener('change', (e) => { v.proto = (e.target as HTMLSelectElement).value as sv.Proto; changed(); });
  $('show-filter').addEventListener('change', (e) => { v.show = (e.target as HTMLSelectElement).value as sv.Show; changed(); });
  for (const f of ['notfull', 'notempty', 'nopass'] as const) {
    $(`f-${f}`).addEventListener('change', (e) => { v[f] = (e.target as HTMLInputElement).checked; changed(); });
  }
  // Favourites changed in another tab.
  window.addEventListener('storage', (e) => { if (sv.reload(e.key)) render(); });
  controls();
  return start;
}

export const serverHooks = {
  get serversLoaded() { return loaded; },
  /** The open server's player history: its address and the samples charted. */
  history() { return detailHooks.history(v.open); },
  /** The open server's details as shown: players, rules, uptime. */
  details() { return detailHooks.details(v.open); },
  /** The view as the URL holds it, and the favourites and recent servers stored. */
  serverView() { return { query: sv.format(v), favourites: [...sv.favourites], recent: sv.recent.slice() }; },
};
