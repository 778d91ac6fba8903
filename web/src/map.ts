// The live map: world outlines drawn with d3-geo on a canvas, every pilot an aircraft
// symbol turned to its heading with a short trail, fed by /api/pilots/stream.

import { geoNaturalEarth1, geoPath, geoGraticule10 } from 'd3-geo';
import { select } from 'd3-selection';
import { zoom, zoomIdentity } from 'd3-zoom';
import { feature } from 'topojson-client';
import { $, h, int, utc, ago, getJson } from './util';

/** A pilot as /api/pilots and the stream's `joined` carry it. */
interface ApiPilot {
  callsign: string; model: string; aircraft: string;
  lat: number; lon: number; alt_ft: number; heading: number;
  pitch?: number | null; roll?: number | null; ground_speed_kt: number;
  local: boolean; relay: string | null; online_since: number; last_seen?: number;
}
interface Snapshot { generated_at: number; online: number; pilots: ApiPilot[] }
type Moved = [string, number, number, number, number, number];
interface Update { generated_at: number; online: number; joined?: ApiPilot[]; moved?: Moved[]; left?: string[] }

/** Trail: one point every TRAIL_STEP seconds, at most TRAIL_POINTS (5 minutes). */
const TRAIL_POINTS = 30;
const TRAIL_STEP = 10;
const TRAIL_SECONDS = TRAIL_POINTS * TRAIL_STEP;
/** Hit-test grid cell, in unzoomed projection pixels. */
const CELL = 8;
/** Hover radius in screen pixels. */
const HIT_PX = 10;

interface Pilot {
  callsign: string; model: string; aircraft: string; key: string;
  lat: number; lon: number; alt_ft: number; heading: number; ground_speed_kt: number;
  local: boolean; relay: string | null; online_since: number;
  /** Projected position (unzoomed canvas CSS pixels) and the screen angle of its heading. */
  x: number; y: number; a: number;
  /** Trail ring: lon/lat, projected x/y, and time of each point. */
  tll: Float32Array; txy: Float32Array; tt: Uint32Array; tn: number; th: number;
  shown: boolean;
}

// Plane outline, nose up, in screen pixels; a plain arrow when thousands are shown.
const PLANE = [0, -7, 1.2, -2, 7, 1.5, 7, 2.8, 1.2, 1.2, 0.9, 4.5, 3, 6, 3, 7.2, 0, 6.4, -3, 7.2, -3, 6, -0.9, 4.5, -1.2, 1.2, -7, 2.8, -7, 1.5, -1.2, -2];
const ARROW = [0, -5, 3.5, 4, 0, 2, -3.5, 4];

const pilots = new Map<string, Pilot>();
let online = 0;
let shownCount = 0;
let latest = 0; // generated_at of the last event
let filter = '';

const canvas = () => $('map') as HTMLCanvasElement;
let ctx: CanvasRenderingContext2D;
let width = 0, height = 0, dpr = 1;
const projection = geoNaturalEarth1();
let land: unknown = null;
let landPath: Path2D | null = null, spherePath: Path2D | null = null, gratPath: Path2D | null = null;
let t = zoomIdentity;
const zoomer = zoom<HTMLCanvasElement, unknown>().scaleExtent([1, 256]);

let grid = new Map<number, Pilot[]>();
let gridDirty = true;
let mouse: [number, number] | null = null;
let hovered: Pilot | null = null;
let selected: string | null = null;
let selectedExtra: ApiPilot | null = null;
let visible = () => true;

// Stream figures for tests and the benchmark.
const applyMs: number[] = [];
let lastApplyMs = 0;
let streamChars = 0;
let streamEvents = 0;
let snapshots = 0;

function project(lon: number, lat: number): [number, number] {
  const p = projection([lon, lat]);
  return p ? [p[0], p[1]] : [NaN, NaN];
}

function headingAngle(p: Pilot): number {
  // Screen angle of true north turned by the heading: project a point a little along it.
  const r = (p.heading * Math.PI) / 180;
  const d = 0.05;
  const c = Math.max(0.05, Math.cos((p.lat * Math.PI) / 180));
  const q = project(p.lon + (Math.sin(r) * d) / c, Math.max(-89.9, Math.min(89.9, p.lat + Math.cos(r) * d)));
  const dx = q[0] - p.x, dy = q[1] - p.y;
  if (!isFinite(dx) || !isFinite(dy) || (dx === 0 && dy === 0)) return r;
  return Math.atan2(dx, -dy);
}

function matches(p: Pilot): boolean {
  return filter === '' || p.key.includes(filter);
}

function place(p: Pilot) {
  const xy = project(p.lon, p.lat);
  p.x = xy[0]; p.y = xy[1];
  p.a = headingAngle(p);
}

function pushTrail(p: Pilot, now: number) {
  const last = p.tn ? p.tt[(p.th + TRAIL_POINTS - 1) % TRAIL_POINTS] : 0;
  if (p.tn && now - last < TRAIL_STEP) return;
  const i = p.th;
  p.tll[2 * i] = p.lon; p.tll[2 * i + 1] = p.lat;
  p.txy[2 * i] = p.x; p.txy[2 * i + 1] = p.y;
  p.tt[i] = now;
  p.th = (i + 1) % TRAIL_POINTS;
  if (p.tn < TRAIL_POINTS) p.tn++;
}

function add(a: ApiPilot, now: number) {
  const p: Pilot = {
    callsign: a.callsign, model: a.model ?? '', aircraft: a.aircraft ?? '',
    key: `${a.callsign}\n${a.aircraft ?? ''}\n${a.model ?? ''}`.toLowerCase(),
    lat: a.lat, lon: a.lon, alt_ft: a.alt_ft, heading: a.heading, ground_speed_kt: a.ground_speed_kt,
    local: a.local, relay: a.relay, online_since: a.online_since,
    x: 0, y: 0, a: 0,
    tll: new Float32Array(2 * TRAIL_POINTS), txy: new Float32Array(2 * TRAIL_POINTS), tt: new Uint32Array(TRAIL_POINTS), tn: 0, th: 0,
    shown: false,
  };
  place(p);
  pushTrail(p, now);
  p.shown = matches(p);
  const old = pilots.get(p.callsign);
  if (old?.shown) shownCount--;
  pilots.set(p.callsign, p);
  if (p.shown) shownCount++;
}

function remove(cs: string) {
  const p = pilots.get(cs);
  if (!p) return;
  if (p.shown) shownCount--;
  pilots.delete(cs);
  if (hovered === p) hovered = null;
}

function applySnapshot(s: Snapshot) {
  pilots.clear();
  shownCount = 0;
  hovered = null;
  latest = s.generated_at;
  online = s.online;
  for (const a of s.pilots) add(a, s.generated_at);
  gridDirty = true;
}

function applyUpdate(u: Update) {
  latest = u.generated_at;
  online = u.online;
  if (u.left) for (const cs of u.left) remove(cs);
  if (u.joined) for (const a of u.joined) add(a, u.generated_at);
  if (u.moved) {
    for (const m of u.moved) {
      const p = pilots.get(m[0]);
      if (!p) continue;
      p.lat = m[1]; p.lon = m[2]; p.alt_ft = m[3]; p.heading = m[4]; p.ground_speed_kt = m[5];
      place(p);
      pushTrail(p, u.generated_at);
    }
  }
  gridDirty = true;
}

function refilter() {
  shownCount = 0;
  for (const p of pilots.values()) {
    p.shown = matches(p);
    if (p.shown) shownCount++;
  }
  gridDirty = true;
}

function buildGrid() {
  grid = new Map();
  for (const p of pilots.values()) {
    if (!p.shown || !isFinite(p.x)) continue;
    const k = Math.floor(p.y / CELL) * 65536 + Math.floor(p.x / CELL);
    const cell = grid.get(k);
    if (cell) cell.push(p); else grid.set(k, [p]);
  }
  gridDirty = false;
}

/** The shown pilot nearest to a canvas CSS pixel, within HIT_PX. */
function hit(mx: number, my: number): Pilot | null {
  if (gridDirty) buildGrid();
  const bx = (mx - t.x) / t.k, by = (my - t.y) / t.k;
  const r = HIT_PX / t.k;
  let best: Pilot | null = null;
  let bestD = r * r;
  for (let cy = Math.floor((by - r) / CELL); cy <= Math.floor((by + r) / CELL); cy++) {
    for (let cx = Math.floor((bx - r) / CELL); cx <= Math.floor((bx + r) / CELL); cx++) {
      const cell = grid.get(cy * 65536 + cx);
      if (!cell) continue;
      for (const p of cell) {
        const d = (p.x - bx) ** 2 + (p.y - by) ** 2;
        if (d <= bestD) { bestD = d; best = p; }
      }
    }
  }
  return best;
}

function resize() {
  const wrap = $('map-wrap');
  const w = wrap.clientWidth, hh = wrap.clientHeight;
  if (w === 0 || hh === 0) return;
  if (w === width && hh === height && dpr === (window.devicePixelRatio || 1)) return;
  width = w; height = hh; dpr = window.devicePixelRatio || 1;
  const c = canvas();
  c.width = Math.round(w * dpr); c.height = Math.round(hh * dpr);
  projection.fitExtent([[4, 4], [w - 4, hh - 4]], { type: 'Sphere' } as never);
  zoomer.extent([[0, 0], [w, hh]]).translateExtent([[0, 0], [w, hh]]);
  buildPaths();
  for (const p of pilots.values()) {
    place(p);
    for (let i = 0; i < p.tn; i++) {
      const j = (p.th + TRAIL_POINTS - p.tn + i) % TRAIL_POINTS;
      const xy = project(p.tll[2 * j], p.tll[2 * j + 1]);
      p.txy[2 * j] = xy[0]; p.txy[2 * j + 1] = xy[1];
    }
  }
  gridDirty = true;
  // Keep the zoom inside the new extent.
  select(c).call(zoomer.transform, t);
  draw();
}

function buildPaths() {
  const path = geoPath(projection);
  spherePath = new Path2D(path({ type: 'Sphere' } as never) ?? '');
  gratPath = new Path2D(path(geoGraticule10()) ?? '');
  landPath = land ? new Path2D(path(land as never) ?? '') : null;
}

function draw() {
  if (!ctx || width === 0 || !visible()) return;
  const k = t.k;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * t.x, dpr * t.y);
  if (spherePath) { ctx.fillStyle = '#0d2436'; ctx.fill(spherePath); }
  if (gratPath) { ctx.strokeStyle = 'rgba(143,160,178,0.13)'; ctx.lineWidth = 0.6 / k; ctx.stroke(gratPath); }
  if (landPath) {
    ctx.fillStyle = '#24384a'; ctx.fill(landPath);
    ctx.strokeStyle = '#3b5369'; ctx.lineWidth = 0.7 / k; ctx.stroke(landPath);
  }
  // Visible part of the map in unzoomed coordinates, to skip what is off screen.
  const x0 = -t.x / k - 20 / k, y0 = -t.y / k - 20 / k, x1 = (width - t.x) / k + 20 / k, y1 = (height - t.y) / k + 20 / k;
  const half = width / 2;
  const oldest = latest - TRAIL_SECONDS;
  // Trails, one path.
  ctx.beginPath();
  for (const p of pilots.values()) {
    if (!p.shown || p.tn === 0 || p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1) continue;
    let started = false, px = 0;
    for (let i = 0; i < p.tn; i++) {
      const j = (p.th + TRAIL_POINTS - p.tn + i) % TRAIL_POINTS;
      if (p.tt[j] < oldest) continue;
      const x = p.txy[2 * j], y = p.txy[2 * j + 1];
      if (!started || Math.abs(x - px) > half) { ctx.moveTo(x, y); started = true; } else ctx.lineTo(x, y);
      px = x;
    }
    if (started && Math.abs(p.x - px) < half) ctx.lineTo(p.x, p.y);
  }
  ctx.strokeStyle = 'rgba(255,181,71,0.45)';
  ctx.lineWidth = 1.2 / k;
  ctx.stroke();
  // Aircraft, one path, in screen pixels.
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const shape = shownCount > 3000 ? ARROW : PLANE;
  const n = shape.length;
  ctx.beginPath();
  for (const p of pilots.values()) {
    if (!p.shown || p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1) continue;
    const sx = t.x + k * p.x, sy = t.y + k * p.y;
    const c = Math.cos(p.a), s = Math.sin(p.a);
    ctx.moveTo(sx + shape[0] * c - shape[1] * s, sy + shape[0] * s + shape[1] * c);
    for (let i = 2; i < n; i += 2) ctx.lineTo(sx + shape[i] * c - shape[i + 1] * s, sy + shape[i] * s + shape[i + 1] * c);
    ctx.closePath();
  }
  ctx.fillStyle = '#ffd89a';
  ctx.fill();
  // The hovered and the selected pilot, ringed.
  for (const p of [hovered, selected ? pilots.get(selected) : null]) {
    if (!p || !p.shown) continue;
    ctx.beginPath();
    ctx.arc(t.x + k * p.x, t.y + k * p.y, 9, 0, 2 * Math.PI);
    ctx.strokeStyle = '#ffb547'; ctx.lineWidth = 1.5; ctx.stroke();
  }
}

let frame = 0;
function scheduleDraw() {
  if (frame) return;
  frame = requestAnimationFrame(() => { frame = 0; draw(); });
}

function showCount() {
  $('pilot-count').textContent = `${int(shownCount)} shown / ${int(online)} online`;
}

function showTooltip() {
  const tip = $('tooltip');
  if (!hovered || !hovered.shown) { tip.hidden = true; return; }
  const p = hovered;
  tip.replaceChildren(
    h('b', {}, p.callsign), '\n',
    p.aircraft || p.model || 'unknown aircraft', '\n',
    `${int(p.alt_ft)} ft · ${int(p.ground_speed_kt)} kt`,
  );
  tip.hidden = false;
  const sx = t.x + t.k * p.x, sy = t.y + t.k * p.y;
  const tw = tip.offsetWidth, th = tip.offsetHeight;
  let left = sx + 14, top = sy + 14;
  if (left + tw > width) left = sx - 14 - tw;
  if (top + th > height) top = sy - 14 - th;
  tip.style.left = `${Math.max(0, left)}px`;
  tip.style.top = `${Math.max(0, top)}px`;
}

function rehover() {
  hovered = mouse ? hit(mouse[0], mouse[1]) : null;
  showTooltip();
}

function row(dl: HTMLElement, k: string, v: string) {
  dl.append(h('dt', {}, k), h('dd', {}, v));
}

function showDetails() {
  const box = $('details');
  const p = selected ? pilots.get(selected) : undefined;
  if (!selected) { box.hidden = true; return; }
  const dl = h('dl');
  const x = selectedExtra;
  if (p) {
    row(dl, 'aircraft', p.aircraft || '–');
    row(dl, 'model', p.model || '–');
    row(dl, 'position', `${p.lat.toFixed(5)}, ${p.lon.toFixed(5)}`);
    row(dl, 'altitude', `${int(p.alt_ft)} ft`);
    row(dl, 'heading', `${int(p.heading)}°`);
    row(dl, 'speed', `${int(p.ground_speed_kt)} kt`);
  }
  row(dl, 'pitch', x && x.pitch !== null && x.pitch !== undefined ? `${x.pitch.toFixed(1)}°` : '–');
  row(dl, 'roll', x && x.roll !== null && x.roll !== undefined ? `${x.roll.toFixed(1)}°` : '–');
  if (p) {
    row(dl, 'via', p.local ? 'this relay' : `relay ${p.relay ?? '?'}`);
    row(dl, 'online since', `${utc(p.online_since)} (${ago(p.online_since, latest)})`);
  }
  if (x?.last_seen) row(dl, 'last seen', ago(x.last_seen, latest));
  $('details-body').replaceChildren(h('h3', {}, selected), p ? dl : h('p', {}, 'left'));
  box.hidden = false;
}

async function select_(cs: string | null) {
  selected = cs;
  selectedExtra = null;
  showDetails();
  scheduleDraw();
  if (!cs) return;
  const r = await getJson<Snapshot>(`/api/pilots?callsign=${encodeURIComponent(cs)}`);
  if (selected !== cs) return;
  selectedExtra = r.body?.pilots?.find((q) => q.callsign === cs) ?? null;
  showDetails();
}

function status(text: string, cls: string) {
  const el = $('stream-status');
  el.textContent = text;
  el.className = `status ${cls}`;
}

let es: EventSource | null = null;
function connect() {
  es?.close();
  es = new EventSource('/api/pilots/stream');
  es.onopen = () => status('live', 'live');
  const handle = (apply: (data: never) => void) => (e: MessageEvent) => {
    const t0 = performance.now();
    streamChars += e.data.length;
    streamEvents++;
    apply(JSON.parse(e.data) as never);
    draw();
    if (mouse) rehover();
    const ms = performance.now() - t0;
    lastApplyMs = ms;
    applyMs.push(ms);
    if (applyMs.length > 600) applyMs.splice(0, applyMs.length - 600);
    showCount();
    if (selected) showDetails();
  };
  es.addEventListener('snapshot', handle((s: Snapshot) => { snapshots++; applySnapshot(s); }) as EventListener);
  es.addEventListener('update', handle((u: Update) => applyUpdate(u)) as EventListener);
  es.onerror = async () => {
    if (es?.readyState !== EventSource.CLOSED) { status('reconnecting', 'bad'); return; }
    // The browser gave up (an HTTP error): find out why, then try again later.
    const r = await getJson<unknown>('/api/pilots?callsign=');
    status(r.absent ? 'no relay runs here' : 'disconnected, retrying', 'bad');
    window.setTimeout(connect, r.absent ? 30000 : 3000);
  };
}

export function initMap(isVisible: () => boolean) {
  visible = isVisible;
  const c = canvas();
  ctx = c.getContext('2d')!;
  zoomer.on('zoom', (e: { transform: typeof t }) => {
    t = e.transform;
    scheduleDraw();
    if (mouse) rehover();
  });
  select(c).call(zoomer).on('dblclick.zoom', null);
  c.addEventListener('mousemove', (e) => {
    mouse = [e.offsetX, e.offsetY];
    rehover();
    scheduleDraw();
  });
  c.addEventListener('mouseleave', () => { mouse = null; hovered = null; showTooltip(); scheduleDraw(); });
  c.addEventListener('click', (e) => {
    const p = hit(e.offsetX, e.offsetY);
    void select_(p ? p.callsign : null);
  });
  $('details-close').addEventListener('click', () => void select_(null));
  const input = $('pilot-filter') as HTMLInputElement;
  input.addEventListener('input', () => {
    filter = input.value.trim().toLowerCase();
    refilter();
    showCount();
    rehover();
    draw();
  });
  new ResizeObserver(() => resize()).observe($('map-wrap'));
  void fetch('/land.json').then((r) => r.json()).then((topo) => {
    land = feature(topo, topo.objects.land);
    buildPaths();
    draw();
  });
  connect();
}

export function mapShown() {
  resize();
  draw();
}

/** What tests and the benchmark may read. */
export const mapHooks = {
  project(lon: number, lat: number): [number, number] {
    const p = project(lon, lat);
    return [t.x + t.k * p[0], t.y + t.k * p[1]];
  },
  pilot(callsign: string) {
    const p = pilots.get(callsign);
    if (!p) return null;
    return {
      callsign: p.callsign, model: p.model, aircraft: p.aircraft, lat: p.lat, lon: p.lon,
      alt_ft: p.alt_ft, heading: p.heading, ground_speed_kt: p.ground_speed_kt, shown: p.shown, trail: p.tn,
    };
  },
  counts() { return { shown: shownCount, online }; },
  get lastApplyMs() { return lastApplyMs; },
  get applyMs() { return applyMs.slice(); },
  get streamChars() { return streamChars; },
  get streamEvents() { return streamEvents; },
  get snapshots() { return snapshots; },
  get zoom() { return { k: t.k, x: t.x, y: t.y }; },
};
