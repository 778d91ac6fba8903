// The Xash3D server browser: /api/servers every 5 s, sortable, filterable, each
// address ready to copy.

import { $, h, ago, utc, getJson, poller } from './util';

interface Server {
  address: string; name?: string | null; hostname?: string | null;
  gamedir: string; map: string; players: number; max: number; bots: number;
  password: boolean; dedicated: boolean; os: string; nat: boolean; version: string;
  protocol: number; region: number; registered_since: number; last_heartbeat: number;
}
interface Servers { generated_at: number; total: number; servers: Server[] }

type Key = 'name' | 'map' | 'players' | 'gamedir' | 'nat' | 'version' | 'since' | 'address';

let data: Servers | null = null;
let sortKey: Key | null = null;
let sortDir = 1;
let loaded = false;

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

function nameOf(s: Server): string {
  return (s.name ?? s.hostname ?? '').trim() || s.address;
}

function compare(a: Server, b: Server, k: Key): number {
  switch (k) {
    case 'name': return collator.compare(nameOf(a), nameOf(b));
    case 'players': return a.players - b.players || a.max - b.max || a.bots - b.bots;
    case 'nat': return Number(a.nat) - Number(b.nat);
    case 'since': return a.registered_since - b.registered_since;
    case 'address': return collator.compare(a.address, b.address);
    default: return collator.compare(String(a[k] ?? ''), String(b[k] ?? ''));
  }
}

/** The server whose player history is open, and the histories read. */
let expanded: string | null = null;
interface Sample { time: number; players: number; max: number; map: string }
interface History { name: string | null; first_seen: number; last_seen: number; samples: Sample[] }
const histories = new Map<string, History | 'none'>();

const SVG = 'http://www.w3.org/2000/svg';

/** A small chart of players over time: a polyline scaled to the slots. */
function chart(samples: Sample[]): Element {
  const W = 320, H = 48;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('width', String(W));
  svg.setAttribute('height', String(H));
  svg.setAttribute('class', 'players-chart');
  const t0 = samples[0].time, t1 = samples[samples.length - 1].time;
  const top = Math.max(1, ...samples.map((x) => x.max));
  const pts = samples.map((x) => {
    const px = t1 > t0 ? ((x.time - t0) / (t1 - t0)) * (W - 2) + 1 : W / 2;
    const py = H - 1 - (x.players / top) * (H - 2);
    return `${px.toFixed(1)},${py.toFixed(1)}`;
  });
  const line = document.createElementNS(SVG, 'polyline');
  line.setAttribute('points', pts.join(' '));
  line.setAttribute('fill', 'none');
  line.setAttribute('stroke', '#ffb547');
  line.setAttribute('stroke-width', '1.5');
  svg.append(line);
  return svg;
}

function historyRow(addr: string): HTMLElement {
  const hist = histories.get(addr);
  let body: (Node | string)[];
  if (hist === undefined) body = ['reading the player history…'];
  else if (hist === 'none') body = ['no player history here (no flight log in this process, or not sampled yet)'];
  else if (hist.samples.length === 0) body = [`first seen ${utc(hist.first_seen)}; no sample in the last 24 hours`];
  else {
    const ps = hist.samples.map((x) => x.players);
    body = [chart(hist.samples), h('span', { class: 'chart-note' },
      `players over the last 24 hours: ${Math.min(...ps)}–${Math.max(...ps)} (${hist.samples.length} samples); first seen ${utc(hist.first_seen)}`)];
  }
  return h('tr', { class: 'history', 'data-history': addr }, h('td', { colspan: 8 }, ...body));
}

async function loadHistory(addr: string) {
  const r = await getJson<History>(`/api/servers/${encodeURIComponent(addr)}/history`);
  histories.set(addr, r.body && !r.error ? r.body : 'none');
  render();
}

function render() {
  const table = $('servers');
  const sel = document.getSelection();
  // Someone is selecting an address to copy it: do not pull the text from under them.
  if (sel && !sel.isCollapsed && sel.anchorNode && table.contains(sel.anchorNode)) return;
  for (const th of table.querySelectorAll('th')) {
    const k = th.getAttribute('data-key');
    if (k === sortKey) th.setAttribute('aria-sort', sortDir > 0 ? 'ascending' : 'descending');
    else th.removeAttribute('aria-sort');
  }
  const tbody = table.querySelector('tbody')!;
  if (!data) { tbody.replaceChildren(); return; }
  const text = ($('server-filter') as HTMLInputElement).value.trim().toLowerCase();
  const gd = ($('gamedir') as HTMLSelectElement).value;
  let list = data.servers.filter((s) => (!gd || s.gamedir === gd) &&
    (!text || `${nameOf(s)}\n${s.address}\n${s.map}\n${s.gamedir}\n${s.version}`.toLowerCase().includes(text)));
  if (sortKey) {
    const k = sortKey;
    list = list.slice().sort((a, b) => sortDir * compare(a, b, k) || collator.compare(a.address, b.address));
  }
  const now = data.generated_at;
  tbody.replaceChildren(...list.flatMap((s) => [h('tr', { 'data-address': s.address, 'aria-expanded': expanded === s.address ? 'true' : 'false' },
    h('td', { class: 'name', title: s.password ? 'password required' : null }, nameOf(s), s.password ? ' (password)' : ''),
    h('td', { class: 'map' }, s.map),
    h('td', { class: 'players num' }, `${s.players}/${s.max}`, s.bots ? ` +${s.bots} bots` : ''),
    h('td', { class: 'gamedir' }, s.gamedir),
    h('td', { class: 'nat' }, s.nat ? 'yes' : 'no'),
    h('td', { class: 'version' }, s.version),
    h('td', { class: 'since', title: new Date(s.registered_since * 1000).toISOString() }, ago(s.registered_since, now)),
    h('td', { class: 'address' }, h('span', { class: 'addr' }, s.address),
      h('button', { class: 'copy', type: 'button', 'data-copy': s.address, 'aria-label': `Copy ${s.address}` }, 'copy')),
  ), ...(expanded === s.address ? [historyRow(s.address)] : [])]));
  $('server-count').textContent = `${list.length} shown / ${data.total} listed`;
}

function gamedirs() {
  const sel = $('gamedir') as HTMLSelectElement;
  const want = [...new Set((data?.servers ?? []).map((s) => s.gamedir))].sort();
  const have = [...sel.options].slice(1).map((o) => o.value);
  if (want.join('\n') === have.join('\n')) return;
  const keep = sel.value;
  sel.replaceChildren(h('option', { value: '' }, 'all games'), ...want.map((g) => h('option', { value: g }, g)));
  sel.value = want.includes(keep) ? keep : '';
}

async function refresh() {
  const r = await getJson<Servers>('/api/servers');
  const note = $('servers-note');
  if (r.absent) {
    data = null;
    note.textContent = 'No Xash3D master runs in this process: not running here.';
  } else if (!r.body || r.error) {
    note.textContent = `Could not read the server list (${r.error ?? 'no body'}); retrying.`;
    return;
  } else {
    data = r.body;
    note.textContent = data.servers.length ? '' : 'No server is registered with the master yet.';
  }
  loaded = true;
  gamedirs();
  render();
}

async function copy(btn: HTMLButtonElement) {
  const addr = btn.getAttribute('data-copy') ?? '';
  try {
    if (!navigator.clipboard || !window.isSecureContext) throw new Error('no clipboard');
    await navigator.clipboard.writeText(addr);
    btn.textContent = 'copied';
  } catch {
    // Select the address so Ctrl-C (or the phone's menu) copies it.
    const span = btn.previousElementSibling;
    if (span) {
      const range = document.createRange();
      range.selectNodeContents(span);
      const sel = document.getSelection();
      sel?.removeAllRanges();
      sel?.addRange(range);
    }
    btn.textContent = 'selected';
  }
  window.setTimeout(() => { btn.textContent = 'copy'; }, 1500);
}

export function initServers(isVisible: () => boolean): () => void {
  const start = poller(refresh, 5000, isVisible);
  $('servers').querySelector('thead')!.addEventListener('click', (e) => {
    const th = (e.target as HTMLElement).closest('th');
    const k = th?.getAttribute('data-key') as Key | null;
    if (!k) return;
    if (sortKey === k) sortDir = -sortDir; else { sortKey = k; sortDir = 1; }
    render();
  });
  $('servers').querySelector('tbody')!.addEventListener('click', (e) => {
    const b = (e.target as HTMLElement).closest('button.copy');
    if (b) { void copy(b as HTMLButtonElement); return; }
    // A click on a server's name opens (or closes) its player history.
    const name = (e.target as HTMLElement).closest('td.name');
    const addr = name?.parentElement?.getAttribute('data-address');
    if (!addr) return;
    expanded = expanded === addr ? null : addr;
    if (expanded) { histories.delete(addr); void loadHistory(addr); }
    render();
  });
  $('server-filter').addEventListener('input', render);
  $('gamedir').addEventListener('change', render);
  return start;
}

export const serverHooks = {
  get serversLoaded() { return loaded; },
  /** The open player history: its address and the samples charted. */
  history() {
    if (!expanded) return null;
    const hist = histories.get(expanded);
    return { address: expanded, samples: hist && hist !== 'none' ? hist.samples.length : null };
  },
};
