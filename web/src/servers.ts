// The Xash3D server browser: /api/servers every 5 s, sortable, filterable, each
// address ready to copy.

import { $, h, ago, getJson, poller } from './util';

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
  tbody.replaceChildren(...list.map((s) => h('tr', { 'data-address': s.address },
    h('td', { class: 'name', title: s.password ? 'password required' : null }, nameOf(s), s.password ? ' (password)' : ''),
    h('td', { class: 'map' }, s.map),
    h('td', { class: 'players num' }, `${s.players}/${s.max}`, s.bots ? ` +${s.bots} bots` : ''),
    h('td', { class: 'gamedir' }, s.gamedir),
    h('td', { class: 'nat' }, s.nat ? 'yes' : 'no'),
    h('td', { class: 'version' }, s.version),
    h('td', { class: 'since', title: new Date(s.registered_since * 1000).toISOString() }, ago(s.registered_since, now)),
    h('td', { class: 'address' }, h('span', { class: 'addr' }, s.address),
      h('button', { class: 'copy', type: 'button', 'data-copy': s.address, 'aria-label': `Copy ${s.address}` }, 'copy')),
  )));
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
    if (b) void copy(b as HTMLButtonElement);
  });
  $('server-filter').addEventListener('input', render);
  $('gamedir').addEventListener('change', render);
  return start;
}

export const serverHooks = { get serversLoaded() { return loaded; } };
