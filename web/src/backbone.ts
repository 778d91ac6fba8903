// The backbone: each part's health (/readyz), the relay's links and the directory's
// published relays (/api/relays), the DNS records and serial (/api/dns), every 2 s.

import { $, h, ago, int, bytes, getJson, poller, type Fetched } from './util';
import type { components } from './api.gen';

type Ready = components['schemas']['ReadyBody'];
type Relays = components['schemas']['RelaysBody'];
type Dns = components['schemas']['DnsBody'];
type Thinning = components['schemas']['Thinning'];

const PARTS = ['relay', 'master', 'dns'];
let loaded = false;

function absent(what: string) {
  return h('p', { class: 'absent' }, `${what}: not running here`);
}
function failed(r: Fetched<unknown>) {
  return h('p', { class: 'down' }, `could not read (${r.error ?? 'no body'})`);
}
function table(head: string[], rows: HTMLElement[]) {
  return h('table', {}, h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))), h('tbody', {}, ...rows));
}

function health(r: Fetched<Ready>) {
  const ul = $('health');
  if (!r.body || !Array.isArray(r.body.parts)) { ul.replaceChildren(h('li', { class: 'down' }, `readyz: ${r.error ?? 'no body'}`)); return; }
  const items = [h('li', { class: r.body.ready ? 'ready' : 'waiting', 'data-part': 'all' }, h('span', { class: 'dot' }), r.body.ready ? 'all parts ready' : 'not ready')];
  const seen = new Set<string>();
  for (const p of r.body.parts) {
    seen.add(p.part);
    items.push(h('li', { class: p.ready ? 'ready' : 'waiting', 'data-part': p.part }, h('span', { class: 'dot' }),
      `${p.part}: ${p.ready ? 'ready' : 'waiting'}${p.detail ? ` (${p.detail})` : ''}`));
  }
  // A part this process does not run is not in /readyz (its API answers 404).
  for (const part of PARTS) {
    if (!seen.has(part)) items.push(h('li', { class: 'absent', 'data-part': part }, h('span', { class: 'dot' }), `${part}: not running here`));
  }
  ul.replaceChildren(...items);
}

function relay(r: Fetched<Relays>) {
  const box = $('relay');
  if (r.absent) return box.replaceChildren(absent('relay'));
  if (!r.body) return box.replaceChildren(failed(r));
  const rl = r.body.relay;
  if (!rl) return box.replaceChildren(absent('relay'));
  const now = r.body.generated_at;
  box.replaceChildren(
    h('p', {}, `${rl.name}${rl.hub ? ' (hub)' : ''}: ${rl.links.length} link${rl.links.length === 1 ? '' : 's'}`),
    rl.links.length ? table(['kind', 'name', 'address', 'in', 'out', 'last in'], rl.links.map((l) => h('tr', { 'data-name': l.name },
      h('td', {}, l.kind), h('td', {}, l.name), h('td', { class: 'addr' }, l.address ?? 'unresolved'),
      h('td', { class: 'num' }, `${int(l.datagrams_in)} (${bytes(l.bytes_in)})`),
      h('td', { class: 'num' }, `${int(l.datagrams_out)} (${bytes(l.bytes_out)})`),
      h('td', {}, l.last_in === null ? 'never' : ago(l.last_in, now))))) : h('p', { class: 'absent' }, 'no relay links or crossfeeds configured'),
    thinning(rl.thinning),
  );
}

// What distance-tiered forwarding left out: the share of what fgms would have sent.
function thinning(t: Thinning) {
  const box = h('div', { id: 'thinning' });
  if (t.tiers === 'off' || !t.per_tier.length) {
    box.append(h('p', {}, 'distance tiers off: every datagram to every pilot in range, as fgms'));
    return box;
  }
  const left = t.per_tier.reduce((n, x) => n + x.thinned_datagrams, 0);
  const leftBytes = t.per_tier.reduce((n, x) => n + x.thinned_bytes, 0);
  const all = left + t.sent_datagrams;
  const share = all > 0 ? (100 * left) / all : 0;
  box.append(
    h('p', {}, `distance tiers ${t.tiers}: ${int(left)} datagrams (${bytes(leftBytes)}) not sent, `,
      h('strong', { id: 'thinned-share' }, `${share.toFixed(1)}%`), ' of what every datagram to everyone in range would have been'),
    table(['tier', 'rate', 'not sent'], t.per_tier.map((x, i) => h('tr', { 'data-tier': String(i) },
      h('td', {}, x.up_to_nm === null ? 'beyond' : `to ${x.up_to_nm} nm`),
      h('td', {}, x.rate_hz === null ? 'full' : `${x.rate_hz} Hz`),
      h('td', { class: 'num' }, `${int(x.thinned_datagrams)} (${bytes(x.thinned_bytes)})`)))),
  );
  return box;
}

function published(r: Fetched<Relays>, dns: Fetched<Dns>) {
  const box = $('published');
  if (r.absent || (dns.absent && !(r.body?.published?.length))) return box.replaceChildren(absent('directory'));
  if (!r.body) return box.replaceChildren(failed(r));
  const now = r.body.generated_at;
  const list = r.body.published ?? [];
  if (!list.length) return box.replaceChildren(h('p', { class: 'absent' }, 'the directory publishes no relay'));
  box.replaceChildren(table(['name', 'host', 'status', 'RTT', 'since'], list.map((p) => h('tr', { 'data-name': p.name },
    h('td', {}, p.name), h('td', { class: 'addr' }, `${p.host}:${p.port}`),
    h('td', { class: `state ${p.up ? 'up' : 'down'}` }, h('span', { class: 'dot' }), p.up ? 'up' : 'down'),
    h('td', { class: 'num' }, p.rtt_ms === null || p.rtt_ms === undefined ? '–' : `${p.rtt_ms.toFixed(1)} ms`),
    h('td', {}, p.since === null ? 'not probed yet' : ago(p.since, now))))));
}

function dnsCard(r: Fetched<Dns>) {
  const box = $('dns');
  if (r.absent) return box.replaceChildren(absent('dns'));
  if (!r.body) return box.replaceChildren(failed(r));
  const d = r.body;
  box.replaceChildren(
    h('p', {}, 'zone ', h('span', { class: 'addr' }, d.zone), ', SOA serial ', h('span', { class: 'addr', id: 'dns-serial' }, String(d.serial))),
    table(['name', 'type', 'TTL', 'data'], d.records.map((x) => h('tr', {},
      h('td', { class: 'addr' }, x.name), h('td', {}, x.type), h('td', { class: 'num' }, x.ttl), h('td', { class: 'addr' }, x.data)))),
  );
}

async function refresh() {
  const [ready, relays, dns] = await Promise.all([
    getJson<Ready>('/readyz'), getJson<Relays>('/api/relays'), getJson<Dns>('/api/dns'),
  ]);
  health(ready);
  relay(relays);
  published(relays, dns);
  dnsCard(dns);
  loaded = true;
}

export function initBackbone(isVisible: () => boolean): () => void {
  return poller(refresh, 2000, isVisible);
}

export const backboneHooks = { get backboneLoaded() { return loaded; } };
