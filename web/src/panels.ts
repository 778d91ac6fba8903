// The map's side panel, one of four at a time (its name in the URL, `panel=`):
// - Pilots: every shown pilot, sortable by callsign, aircraft, altitude, speed and
//   distance from the map's centre; a click selects the pilot and centres the map on it.
// - Chat: the network's recent chat (GET /api/chat once the stream is open, then the
//   stream's `chat` events; each line once, by id), filtered by the visible area and
//   by frequency.
// - ATC: the stations of GET /api/atc (asked every 5 s while the panel shows); a click
//   centres the map on one.
// - Leaders: GET /api/leaderboards for the chosen period (7 days, 30 days, all time) by
//   hours or flights (asked every minute while the panel shows); a click selects the
//   callsign, whose details show its flight log with GPX and KML downloads.
// And the legend of the aircraft symbols.

import { $, h, int, utc, getJson, poller } from './util';
import { mapApi, view, listeners, select_, centreOn, type Pilot } from './map';
import { freq, NO_RADIO_WHY } from './mapdetails';
import type { components } from './api.gen';
import { CLASSES, LABELS, symbolCanvas } from './symbols';
import { PANELS, SORTS, sameFreq, type Panel, type Sort } from './mapview';
import { distanceNm } from './geo';

/** Rows drawn at most in the pilot and chat lists. */
const MAX_ROWS = 200;
/** Chat lines kept (the API keeps at most 1,000). */
const MAX_CHAT = 1000;

const chat = new Map<number, ChatLine>();
type ChatLine = components['schemas']['ChatLine'];
type ChatBody = components['schemas']['ChatBody'];
type Station = components['schemas']['Station'];
let stations: Station[] | null = null;
let atcAbsent = false;
let shownPilots: string[] = [];
let shownChat: number[] = [];

function showPanel() {
  const p = view.panel;
  $('side').hidden = p === null;
  for (const name of PANELS) {
    $(`side-${name}`).hidden = name !== p;
    $(`open-${name}`).setAttribute('aria-pressed', String(name === p));
  }
  if (p === 'pilots') renderPilots();
  if (p === 'chat') renderChat();
  if (p === 'atc') { renderAtc(); atcPoll(); }
  if (p === 'leaders') { renderLeaders(); leadersPoll(); }
}

function open(p: Panel) {
  view.panel = view.panel === p ? null : p;
  showPanel();
  mapApi.changed();
}

// The pilot list.
function sortValue(p: Pilot, s: Sort, c: [number, number] | null): number | string {
  switch (s) {
    case 'callsign': return p.callsign.toLowerCase();
    case 'aircraft': return (p.info.aircraft_name || p.aircraft || '').toLowerCase();
    case 'alt': return p.alt_ft;
    case 'speed': return p.ground_speed_kt;
    default: return c ? distanceNm(c[0], c[1], p.lat, p.lon) : 0;
  }
}

function renderPilots() {
  if (view.panel !== 'pilots') return;
  const c = mapApi.centre();
  const rows: [Pilot, number | string, number][] = [];
  for (const p of mapApi.pilots()) {
    if (!p.shown) continue;
    const d = c ? distanceNm(c[0], c[1], p.lat, p.lon) : NaN;
    rows.push([p, view.sort === 'dist' ? d : sortValue(p, view.sort, c), d]);
  }
  const dir = view.dir;
  rows.sort((a, b) => (a[1] < b[1] ? -dir : a[1] > b[1] ? dir : a[0].callsign < b[0].callsign ? -1 : 1));
  for (const th of document.querySelectorAll<HTMLElement>('#pilot-list th[data-sort]')) {
    const k = th.getAttribute('data-sort');
    if (k === view.sort) th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending'); else th.removeAttribute('aria-sort');
  }
  const sel = mapApi.selected;
  const top = rows.slice(0, MAX_ROWS);
  shownPilots = top.map((r) => r[0].callsign);
  // The rows are made again at each update: keep the keyboard on the row it was on.
  const tbody = $('pilot-list').querySelector('tbody')!;
  const focused = tbody.contains(document.activeElement) ? document.activeElement?.getAttribute('data-callsign') : null;
  tbody.replaceChildren(...top.map(([p, , d]) => h('tr', { 'data-callsign': p.callsign, 'aria-selected': p.callsign === sel ? 'true' : null, tabindex: 0 },
    h('td', { class: 'cs' }, p.callsign),
    h('td', { class: `ac cls-${mapApi.className(p)}`, title: LABELS[mapApi.className(p)] }, p.info.aircraft_name || p.aircraft || '–'),
    p.placed ? h('td', { class: 'num' }, int(p.alt_ft)) : h('td', { class: 'num', title: 'its client is still loading the scenery' }, '–'),
    h('td', { class: 'num' }, int(p.ground_speed_kt)),
    h('td', { class: 'num' }, isFinite(d) ? int(d) : '–'))));
  if (focused) tbody.querySelector<HTMLElement>(`tr[data-callsign="${CSS.escape(focused)}"]`)?.focus({ preventScroll: true });
  $('pilot-list-more').textContent = rows.length > MAX_ROWS ? `${int(MAX_ROWS)} of ${int(rows.length)} shown: filter or sort to find others` : '';
}

// The chat panel.
function addChat(lines: ChatLine[]) {
  for (const l of lines) chat.set(l.id, l);
  if (chat.size > MAX_CHAT) {
    const ids = [...chat.keys()].sort((a, b) => a - b);
    for (const id of ids.slice(0, chat.size - MAX_CHAT)) chat.delete(id);
  }
}

function freqOptions() {
  const sel = $('chat-freq') as HTMLSelectElement;
  const fs = new Set<string>();
  for (const l of chat.values()) if (l.frequency_mhz) fs.add(l.frequency_mhz.toFixed(3));
  for (const s of stations ?? []) if (s.frequency_mhz) fs.add(s.frequency_mhz.toFixed(3));
  if (view.freq !== null) fs.add(view.freq.toFixed(3));
  const want = ['', ...[...fs].sort()];
  const have = [...sel.options].map((o) => o.value);
  if (want.join() !== have.join()) {
    sel.replaceChildren(...want.map((v) => h('option', { value: v }, v ? freq(Number(v)) : 'any frequency')));
  }
  sel.value = view.freq === null ? '' : view.freq.toFixed(3);
}

function renderChat() {
  if (view.panel !== 'chat') return;
  freqOptions();
  ($('chat-area') as HTMLInputElement).checked = view.area;
  const lines = [...chat.values()]
    .filter((l) => (!view.area || mapApi.inView(l.lat, l.lon)) && (view.freq === null || sameFreq(l.frequency_mhz, view.freq)))
    .sort((a, b) => b.id - a.id).slice(0, MAX_ROWS);
  shownChat = lines.map((l) => l.id);
  $('chat-lines').replaceChildren(...lines.map((l) => h('li', { 'data-id': l.id, 'data-callsign': l.callsign, class: l.atc ? 'atc' : null },
    h('time', { datetime: new Date(l.at * 1000).toISOString() }, utc(l.at).slice(11, 19)), ' ',
    h('b', {}, l.callsign), l.frequency_mhz ? h('span', { class: 'freq' }, ` ${freq(l.frequency_mhz)}`) : '', ' ',
    h('span', { class: 'text' }, l.text))));
  $('chat-note').textContent = chat.size === 0 ? 'Nothing said in the last hour.' : lines.length === 0 ? 'No line matches the filters.' : '';
}

// The ATC panel.
let atcPoll = () => {};

async function loadAtc() {
  const r = await getJson<components['schemas']['AtcBody']>('/api/atc');
  atcAbsent = r.absent;
  if (r.body?.stations) stations = r.body.stations;
  renderAtc();
}

function renderAtc() {
  if (view.panel !== 'atc') return;
  const list = stations ?? [];
  $('atc-list').querySelector('tbody')!.replaceChildren(...list.map((s) => h('tr', { 'data-callsign': s.callsign, tabindex: 0 },
    h('td', { class: 'cs' }, s.callsign),
    h('td', {}, s.airport ?? '–'),
    h('td', {}, s.position ?? '–'),
    h('td', { class: 'num', ...(s.frequency_mhz ? {} : { title: NO_RADIO_WHY }) }, freq(s.frequency_mhz)))));
  $('atc-note').textContent = atcAbsent ? 'No relay runs here.' : stations === null ? 'Reading…' : list.length === 0 ? 'No controller is online.' : '';
}

// The leaderboards.
type Leader = components['schemas']['Leader'];
let leaders: Leader[] | null = null;
let leadersNote = '';
let leadersPoll = () => {};

async function loadLeaders() {
  const period = ($('leaders-period') as HTMLSelectElement).value;
  const by = ($('leaders-by') as HTMLSelectElement).value;
  const r = await getJson<components['schemas']['LeaderboardBody']>(`/api/leaderboards?period=${period}&by=${by}&limit=100`);
  leadersNote = r.absent ? 'No flight log runs here.' : r.error ?? '';
  leaders = r.body?.leaders ?? (r.absent ? [] : leaders);
  renderLeaders();
}

function renderLeaders() {
  if (view.panel !== 'leaders') return;
  const list = leaders ?? [];
  $('leaders-list').querySelector('tbody')!.replaceChildren(...list.map((l) => h('tr', { 'data-callsign': l.callsign, tabindex: 0 },
    h('td', { class: 'num' }, String(l.rank)),
    h('td', { class: 'cs' }, l.callsign),
    h('td', { class: 'num' }, l.hours.toFixed(1)),
    h('td', { class: 'num' }, int(l.flights)),
    h('td', { class: 'num' }, int(l.distance_nm)))));
  $('leaders-note').textContent = leadersNote || (leaders === null ? 'Reading…' : list.length === 0 ? 'No flights in this period.' : '');
}

function legend() {
  $('legend-list').replaceChildren(...CLASSES.map((c) => h('li', { 'data-class': c }, symbolCanvas(c), LABELS[c])));
  if (window.innerWidth > 700) ($('legend') as HTMLDetailsElement).open = true;
}

/** Keyboard: Enter or Space on a focused row acts as a click. */
function rowKeys(el: HTMLElement, act: (tr: HTMLElement) => void) {
  el.addEventListener('click', (e) => { const tr = (e.target as HTMLElement).closest<HTMLElement>('tr[data-callsign]'); if (tr) act(tr); });
  el.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    const tr = (e.target as HTMLElement).closest<HTMLElement>('tr[data-callsign]');
    if (tr) { e.preventDefault(); act(tr); }
  });
}

export function initPanels(isVisible: () => boolean) {
  legend();
  for (const p of PANELS) $(`open-${p}`).addEventListener('click', () => open(p));
  $('side-close').addEventListener('click', () => open(null));
  $('pilot-list').querySelector('thead')!.addEventListener('click', (e) => {
    const th = (e.target as HTMLElement).closest('th[data-sort]');
    const k = th?.getAttribute('data-sort') as Sort | null;
    if (!k || !(SORTS as readonly string[]).includes(k)) return;
    if (view.sort === k) view.dir = view.dir > 0 ? -1 : 1; else { view.sort = k; view.dir = k === 'alt' || k === 'speed' ? -1 : 1; }
    renderPilots();
    mapApi.changed();
  });
  rowKeys($('pilot-list'), (tr) => {
    const cs = tr.getAttribute('data-callsign')!;
    const p = [...mapApi.pilots()].find((q) => q.callsign === cs);
    void select_(cs, view.follow);
    if (p) centreOn(p.lat, p.lon);
    renderPilots();
  });
  rowKeys($('atc-list'), (tr) => {
    const s = stations?.find((x) => x.callsign === tr.getAttribute('data-callsign'));
    if (s) centreOn(s.lat, s.lon, 64);
  });
  $('chat-lines').addEventListener('click', (e) => {
    const li = (e.target as HTMLElement).closest('li[data-id]');
    const l = li ? chat.get(Number(li.getAttribute('data-id'))) : undefined;
    if (l) void select_(l.callsign);
  });
  $('chat-area').addEventListener('change', () => { view.area = ($('chat-area') as HTMLInputElement).checked; renderChat(); mapApi.changed(); });
  $('chat-freq').addEventListener('change', () => {
    const v = ($('chat-freq') as HTMLSelectElement).value;
    view.freq = v ? Number(v) : null;
    renderChat();
    mapApi.changed();
  });
  listeners.update.push(() => { if (view.panel === 'pilots') renderPilots(); });
  listeners.chat.push((lines) => { addChat(lines); renderChat(); });
  let viewTimer = 0;
  listeners.view.push(() => {
    // The centre and the visible area move the distance column and the chat's area filter.
    window.clearTimeout(viewTimer);
    viewTimer = window.setTimeout(() => {
      if ($('side').hidden !== (view.panel === null) || PANELS.some((p) => $(`side-${p}`).hidden === (p === view.panel))) showPanel();
      else if (view.panel === 'pilots') renderPilots();
      else if (view.panel === 'chat' && view.area) renderChat();
    }, 100);
  });
  atcPoll = poller(loadAtc, 5000, () => isVisible() && view.panel === 'atc');
  leadersPoll = poller(loadLeaders, 60_000, () => isVisible() && view.panel === 'leaders');
  for (const id of ['leaders-period', 'leaders-by']) $(id).addEventListener('change', () => { void loadLeaders(); });
  rowKeys($('leaders-list'), (tr) => { void select_(tr.getAttribute('data-callsign')!); });
  // The recent chat, read once the stream is there (its snapshot): lines recorded before
  // are in /api/chat, lines after come as `chat` events (both kept by id).
  listeners.snapshot.push(() => {
    void getJson<ChatBody>('/api/chat?limit=500').then((r) => {
      if (r.body?.lines) { addChat(r.body.lines); renderChat(); }
    });
  });
  showPanel();
}

/** When the map tab shows again, the ATC poll resumes. */
export function panelsShown() {
  if (view.panel === 'atc') atcPoll();
  if (view.panel === 'leaders') leadersPoll();
}

export const panelHooks = {
  /** What the panels show: the pilot list's callsigns in order, the chat lines' ids, the stations. */
  panels() {
    return { panel: view.panel, pilots: shownPilots.slice(), chat: shownChat.slice(), atc: (stations ?? []).map((s) => s.callsign), chatKept: chat.size,
      leaders: (leaders ?? []).map((l) => l.callsign) };
  },
};
