// The list's heat maps: per game directory, the median of concurrent players by UTC
// hour (last 14 days) and by weekday (last 6 weeks), from /api/list/heatmaps every
// 30 s, drawn here as cells (the API sends numbers, not pictures).

import { $, h, utc, getJson, poller } from './util';
import type { components } from './api.gen';

type Gamedir = components['schemas']['GamedirHeat'];
type Heatmaps = components['schemas']['HeatmapsBody'];

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
let data: Heatmaps | null = null;

// The colour scale: dark blue (none playing) through brick to amber (this game's busiest).
const STOPS: [number, number, number][] = [[0x22, 0x38, 0x4c], [0xb4, 0x5a, 0x3c], [0xff, 0xd0, 0x78]];

export function colour(t: number): string {
  const x = Math.max(0, Math.min(1, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const c = STOPS[i].map((a, k) => Math.round(a + (STOPS[i + 1][k] - a) * f));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** 3, 2.5, 0.3: a median of counts is a whole or half number; anything else to one decimal. */
function value(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

function cell(label: string, n: number | null, top: number, what: string, kind: string, index: number): HTMLElement {
  if (n === null || n === undefined || !Number.isFinite(n)) {
    return h('div', { class: 'hm-cell hm-none', title: `${what}: no samples`, [`data-${kind}`]: index },
      h('span', { class: 'hm-label' }, label), h('span', { class: 'hm-value' }, '–'));
  }
  const t = top > 0 ? n / top : 0;
  const el = h('div', { class: `hm-cell${t > 0.6 ? ' hm-bright' : ''}`, title: `${what}: median ${value(n)} players`, [`data-${kind}`]: index, 'data-value': n },
    h('span', { class: 'hm-label' }, label), h('span', { class: 'hm-value' }, value(n)));
  el.style.background = colour(t);
  return el;
}

function legend(top: number): HTMLElement {
  const ramp = h('span', { class: 'hm-ramp', 'aria-hidden': 'true' });
  ramp.style.background = `linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map(colour).join(', ')})`;
  return h('div', { class: 'hm-legend' }, '0 ', ramp, ` ${value(top)} players`,
    h('span', { class: 'hm-cell hm-none hm-key', 'aria-hidden': 'true' }), ' no samples');
}

function block(g: Gamedir, d: Heatmaps): HTMLElement {
  const all = [...g.hours, ...g.weekdays].filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  const top = all.length ? Math.max(...all) : 0;
  const hours = Array.from({ length: 24 }, (_, i) => g.hours[i] ?? null);
  const days = Array.from({ length: 7 }, (_, i) => g.weekdays[i] ?? null);
  const hh = (i: number) => String(i).padStart(2, '0');
  return h('section', { class: 'heatmap card', 'data-gamedir': g.gamedir },
    h('h2', {}, g.gamedir), legend(top),
    h('h3', {}, `Median players by hour (UTC), last ${d.hour_days} days`),
    h('div', { class: 'hm-grid hm-hours' }, ...hours.map((n, i) => cell(hh(i), n, top, `${g.gamedir} ${hh(i)}:00–${hh(i)}:59 UTC`, 'hour', i))),
    h('h3', {}, `Median players by weekday (UTC), last ${d.weekday_weeks} weeks`),
    h('div', { class: 'hm-grid hm-weekdays' }, ...days.map((n, i) => cell(WEEKDAYS[i], n, top, `${g.gamedir} ${WEEKDAYS[i]}`, 'weekday', i))));
}

function render() {
  const box = $('heatmaps');
  const note = $('heatmaps-note');
  if (!data) { box.replaceChildren(); return; }
  const list = data.gamedirs.slice().sort((a, b) => a.gamedir.localeCompare(b.gamedir));
  note.textContent = list.length
    ? `Medians of the list's player samples, per game; each game's colours run from 0 to its own busiest cell. Generated ${utc(data.generated_at)}.`
    : 'No samples yet: the list samples each game\'s players every few minutes ([master] sample_interval).';
  box.replaceChildren(...list.map((g) => block(g, data!)));
}

async function refresh() {
  const r = await getJson<Heatmaps>('/api/list/heatmaps');
  if (r.absent) {
    data = null;
    $('heatmaps-note').textContent = 'No Xash3D master runs in this process: not running here.';
  } else if (!r.body || r.error || !Array.isArray(r.body.gamedirs)) {
    $('heatmaps-note').textContent = `Could not read the heat maps (${r.error ?? (r.status === 503 ? 'busy' : 'no body')}); retrying.`;
    return;
  } else data = r.body;
  render();
}

export function initHeatmaps(isVisible: () => boolean): () => void {
  return poller(refresh, 30_000, isVisible);
}

export const heatmapHooks = {
  /** What is drawn: per gamedir, how many hour and weekday cells hold a value. */
  heatmaps() {
    if (!data) return null;
    return data.gamedirs.map((g) => ({
      gamedir: g.gamedir,
      hours: g.hours.filter((x) => x !== null).length,
      weekdays: g.weekdays.filter((x) => x !== null).length,
    }));
  },
};
