// A server's details, in the row under it: the join command, protocol, the master's
// round trip, uptime over the last 7 days, the players over the last 24 hours, the
// player list and the rules (queried live by the master: /api/servers/{addr}/details).

import { h, ago, utc, int, getJson, copyText } from './util';
import { type Server, protocolName } from './serverview';
import type { components } from './api.gen';

type Details = components['schemas']['ServerDetails'];
type Sample = components['schemas']['ServerSamplePoint'];
type History = components['schemas']['ServerHistoryBody'];
type ErrorBody = components['schemas']['ErrorBody'];

const DAY = 86400;
const WEEK = 7 * DAY;
/** The flight log's default `[history] server_sample_interval`, for a history too short to tell. */
const DEFAULT_INTERVAL = 300;
/** The API caches a server's details 10 s: asking more often brings nothing new. */
const DETAILS_EVERY = 10_000;

type Got<T> = { ok: T } | { none: string } | { busy: string } | undefined;
const details = new Map<string, { got: Got<Details>; at: number }>();
const histories = new Map<string, Got<History>>();
let rulesOpen = false;
let changed: () => void = () => {};

export function initDetails(onChange: () => void) { changed = onChange; }

async function loadDetails(addr: string) {
  details.set(addr, { got: details.get(addr)?.got, at: Date.now() });
  const r = await getJson<Details>(`/api/servers/${encodeURIComponent(addr)}/details`);
  let got: Got<Details>;
  if (r.body && !r.error && r.status === 200) got = { ok: r.body };
  else if (r.status === 503) got = { busy: 'the master is busy; asking again shortly' };
  else if (r.status === 404) got = { none: (r.body as ErrorBody | null)?.error ?? 'not listed' };
  else got = { none: `could not ask (${r.error ?? 'no body'})` };
  // A busy master: ask again in 3 s rather than 10.
  details.set(addr, { got, at: 'busy' in got ? Date.now() - DETAILS_EVERY + 3000 : Date.now() });
  changed();
}

async function loadHistory(addr: string, now: number) {
  // Seven days of samples: the chart shows the last 24 hours, the uptime uses them all.
  const r = await getJson<History>(`/api/servers/${encodeURIComponent(addr)}/history?since=${now - WEEK}`);
  histories.set(addr, r.body && !r.error && r.status === 200 ? { ok: r.body }
    : { none: r.status === 404 ? 'no flight log in this process, or never sampled' : `could not read (${r.error ?? 'no body'})` });
  changed();
}

/** The details of `addr` were opened: read them and its history afresh. */
export function openDetail(addr: string, now: number) {
  details.delete(addr);
  histories.delete(addr);
  void loadDetails(addr);
  void loadHistory(addr, now);
}

/** Called on every list refresh: the open server's details again once the API's cache expired. */
export function refreshDetail(addr: string) {
  const d = details.get(addr);
  if (d && Date.now() - d.at >= DETAILS_EVERY) void loadDetails(addr);
}

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

/**
 * The sampling interval of a history: the flight log stores one sample per listed
 * server every `[history] server_sample_interval` seconds, which the API does not state,
 * so it is read from the samples: the lower quartile of the gaps between consecutive
 * samples (gaps while the server was down are longer; a second of jitter is rounded
 * away). DEFAULT_INTERVAL with fewer than two samples.
 */
export function sampleInterval(samples: Sample[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    const g = samples[i].time - samples[i - 1].time;
    if (g > 0) gaps.push(g);
  }
  if (!gaps.length) return DEFAULT_INTERVAL;
  gaps.sort((a, b) => a - b);
  return Math.max(1, gaps[Math.floor((gaps.length - 1) / 4)]);
}

/** Uptime over the last 7 days: samples in them × interval / 7 days, at most 100 %. */
export function uptime(hist: History, now: number): { share: number; since: number | null; samples: number; interval: number } {
  const week = hist.samples.filter((x) => x.time > now - WEEK && x.time <= now);
  const interval = sampleInterval(week);
  const up = week.length * interval;
  const share = Math.min(1, up / WEEK);
  // First seen within the week: the share of the time since then, too.
  const since = hist.first_seen > now - WEEK ? Math.min(1, up / Math.max(interval, now - hist.first_seen + interval)) : null;
  return { share, since, samples: week.length, interval };
}

/** A player's name without the engine's colour codes (`^1`), as the list's names are shown. */
const plain = (s: string) => s.replace(/\^[0-9]/g, '').trim();

const pct = (x: number) => (x > 0 && x < 0.0005 ? '< 0.1 %' : `${(x * 100).toFixed(x >= 0.9995 || x === 0 ? 0 : 1)} %`);

function duration(s: number): string {
  const t = Math.max(0, Math.floor(s));
  const hr = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), sec = t % 60;
  if (hr) return `${hr} h ${String(m).padStart(2, '0')} min`;
  return m ? `${m} min ${String(sec).padStart(2, '0')} s` : `${sec} s`;
}

function uptimeText(hist: Got<History>, now: number): (Node | string)[] {
  if (hist === undefined) return ['reading…'];
  if ('none' in hist || 'busy' in hist) return [h('span', { class: 'uptime', 'data-uptime': 'unknown' }, 'uptime unknown'), ` (${'none' in hist ? hist.none : hist.busy})`];
  const u = uptime(hist.ok, now);
  return [h('span', { class: 'uptime', 'data-uptime': u.share.toFixed(4) }, pct(u.share)),
    ` (${int(u.samples)} samples, one every ${u.interval} s${u.since !== null ? `; first seen ${ago(hist.ok.first_seen, now)}: up ${pct(u.since)} since` : ''})`];
}

function chartPart(hist: Got<History>, now: number): HTMLElement {
  let body: (Node | string)[];
  if (hist === undefined) body = ['reading the player history…'];
  else if (!('ok' in hist)) body = ['no player history here (no flight log in this process, or not sampled yet)'];
  else {
    const day = hist.ok.samples.filter((x) => x.time > now - DAY);
    if (!day.length) body = [`first seen ${utc(hist.ok.first_seen)}; no sample in the last 24 hours`];
    else {
      const ps = day.map((x) => x.players);
      body = [chart(day), h('span', { class: 'chart-note' },
        `players over the last 24 hours: ${Math.min(...ps)}–${Math.max(...ps)} (${day.length} samples); first seen ${utc(hist.ok.first_seen)}`)];
    }
  }
  return h('div', { class: 'detail-chart' }, ...body);
}

function playersPart(got: Got<Details>): HTMLElement {
  if (got === undefined) return h('div', { class: 'detail-players' }, h('h4', {}, 'Players'), h('p', { class: 'note' }, 'asking the server…'));
  if (!('ok' in got)) return h('div', { class: 'detail-players' }, h('h4', {}, 'Players'), h('p', { class: 'note' }, 'none' in got ? got.none : got.busy));
  const d = got.ok;
  if (!d.players) return h('div', { class: 'detail-players' }, h('h4', {}, 'Players'), h('p', { class: 'note players-note' }, d.players_note ?? 'the server sent no player list'));
  const list = d.players.slice().sort((a, b) => b.frags - a.frags || a.seconds - b.seconds);
  return h('div', { class: 'detail-players' }, h('h4', {}, `Players (${list.length})`),
    list.length ? h('table', { class: 'players' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'name'), h('th', { scope: 'col' }, 'frags'), h('th', { scope: 'col' }, 'time'))),
      h('tbody', {}, ...list.map((p) => h('tr', {}, h('td', { class: 'player' }, plain(p.name) || '(unnamed)'),
        h('td', { class: 'num' }, String(p.frags)), h('td', { class: 'num' }, duration(p.seconds))))))
      : h('p', { class: 'note players-note' }, 'nobody is playing'));
}

function rulesPart(got: Got<Details>): HTMLElement | null {
  if (!got || !('ok' in got)) return null;
  const d = got.ok;
  const rules = d.rules;
  const el = h('details', { class: 'detail-rules', open: rulesOpen && Boolean(rules?.length) },
    h('summary', {}, rules ? `Rules (${rules.length})` : 'Rules'),
    rules ? h('table', { class: 'rules' }, h('tbody', {}, ...rules.map(([k, v]) => h('tr', {}, h('td', { class: 'rule' }, k), h('td', { class: 'value' }, v)))))
      : h('p', { class: 'note' }, d.rules_note ?? 'the server sent no rules'));
  el.addEventListener('toggle', () => { rulesOpen = (el as HTMLDetailsElement).open; });
  return el;
}

/** The row under server `addr` (`s` null when it is not listed now). */
export function detailRow(addr: string, s: Server | null, cols: number, now: number): HTMLElement {
  const got = details.get(addr)?.got;
  const hist = histories.get(addr);
  const d = got && 'ok' in got ? got.ok : null;
  const proto = d?.protocol ?? s?.protocol ?? null;
  const rtt: (Node | string)[] = [];
  rtt.push(h('span', { class: 'rtt' }, s?.ping_ms === null || s?.ping_ms === undefined ? '–' : `${Math.round(s.ping_ms)} ms`),
    s?.ping_ms === null || s?.ping_ms === undefined ? ' (not probed: known by heartbeat only)' : ' at its last probe');
  if (d && d.ping_ms !== null && d.ping_ms !== undefined) rtt.push(`; ${Math.round(d.ping_ms)} ms when asked ${ago(d.queried_at, now)}`);
  const join = `connect ${addr}`;
  const facts = h('dl', { class: 'detail-facts' },
    h('dt', {}, 'Join'), h('dd', {}, h('code', { class: 'join' }, join),
      h('button', { class: 'copy copy-join', type: 'button', 'data-copy': join, 'aria-label': `Copy ${join}` }, 'copy')),
    h('dt', {}, 'Protocol'), h('dd', { class: 'protocol' }, proto === null ? '–' : `${protocolName(proto)} (${proto})`),
    h('dt', {}, 'Round trip'), h('dd', {}, ...rtt),
    h('dt', {}, 'Uptime, 7 days'), h('dd', {}, ...uptimeText(hist, now)),
    s?.sources?.length ? h('dt', {}, 'Listed by') : null, s?.sources?.length ? h('dd', {}, s.sources.join(', ')) : null,
    s ? null : h('dt', {}, 'Status'), s ? null : h('dd', {}, 'not listed now'),
  );
  return h('tr', { class: 'history detail', 'data-history': addr },
    h('td', { colspan: cols }, h('div', { class: 'detail-grid' }, facts, chartPart(hist, now), playersPart(got), rulesPart(got))));
}

export async function copyJoin(btn: HTMLElement) {
  await copyText(btn, btn.getAttribute('data-copy') ?? '', btn.previousElementSibling);
}

export const detailHooks = {
  /** The open server's history: its address and the samples charted (last 24 hours). */
  history(addr: string | null) {
    if (!addr) return null;
    const hist = histories.get(addr);
    const now = Math.floor(Date.now() / 1000);
    return { address: addr, samples: hist && 'ok' in hist ? hist.ok.samples.filter((x) => x.time > now - DAY).length : null };
  },
  /** What the details row shows: players (null: none sent), rules, uptime share (null: unknown). */
  details(addr: string | null) {
    if (!addr) return null;
    const got = details.get(addr)?.got;
    const hist = histories.get(addr);
    const now = Math.floor(Date.now() / 1000);
    return {
      address: addr, read: Boolean(got && 'ok' in got),
      players: got && 'ok' in got ? got.ok.players?.length ?? null : null,
      rules: got && 'ok' in got ? got.ok.rules?.length ?? null : null,
      uptime: hist && 'ok' in hist ? uptime(hist.ok, now).share : null,
    };
  },
};
