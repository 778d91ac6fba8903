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

const pilots = new Map<string, Pilot>();
let online = 0;
let shownCount = 0;
let latest = 0; // generated_at of the last event
let filter = '';

const canvas = () => $('map') as HTMLCanvasElement;
let ctx: CanvasRenderingContext2D;
let octx: CanvasRenderingContext2D;
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

/** The flight log of the selected callsign (null: none, or no flight log here). */
interface FlightEntry {
  id: number; callsign: string; model: string; relay: string; start: number; end: number | null;
  duration_s: number; distance_nm: number; max_alt_ft: number | null; samples: number;
}
interface FlightsBody { generated_at: number; flights: FlightEntry[]; next_before: number | null }
interface FlightBody { flight: FlightEntry; track: { geometry: { coordinates: [number, number, number][] } } }
let selectedFlights: FlightEntry[] | null = null;
/** Today's tracks of the selected callsign: lon/lat per point, one array per flight. */
let selectedTracks: Float32Array[] = [];
/** Tracks drawn at most this many flights back (today's). */
const MAX_TRACKS = 10;
let visible = () => true;

// Stream figures for tests and the benchmark.
const applyMs: number[] = [];
let lastApplyMs = 0;
let lastSplit = { parse: 0, apply: 0, draw: 0 };
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
  const o = octx.canvas;
  o.width = c.width; o.height = c.height;
  baseDirty = true;
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
  baseDirty = true;
}

// Drawing. The world goes on the base canvas, redrawn only when the view changes. The
// pilots and their trails go on an overlay canvas, written as pixels into one
// ImageData buffer and put at once: with 10,000 pilots that takes a few milliseconds,
// where 10,000 canvas path fills take hundreds in a software-rendered canvas.

/** One sprite per 5° of heading: pixel offsets from the centre and RGBA values. */
const ROTATIONS = 72;
let sprites: { off: Int16Array; rgba: Uint32Array }[] = [];
let spriteDpr = 0;
let pixels: ImageData | null = null;
let buf32: Uint32Array | null = null;
const TRAIL_RGBA = 0x9047b5ff; // rgba(255,181,71,0.56), little-endian
const TRACK_RGBA = 0xe6ffc850; // rgba(80,200,255,0.9): the selected pilot's tracks today
let baseDirty = true;

function buildSprites() {
  const S = Math.ceil(18 * dpr);
  const c = document.createElement('canvas');
  c.width = S * ROTATIONS; c.height = S;
  const a = c.getContext('2d')!;
  a.fillStyle = '#ffd89a';
  a.strokeStyle = 'rgba(15,23,32,0.9)';
  a.lineWidth = 1;
  for (let r = 0; r < ROTATIONS; r++) {
    a.setTransform(dpr, 0, 0, dpr, r * S + S / 2, S / 2);
    a.rotate((r * 2 * Math.PI) / ROTATIONS);
    a.beginPath();
    a.moveTo(PLANE[0], PLANE[1]);
    for (let i = 2; i < PLANE.length; i += 2) a.lineTo(PLANE[i], PLANE[i + 1]);
    a.closePath();
    a.fill();
    a.stroke();
  }
  const src = new Uint32Array(a.getImageData(0, 0, S * ROTATIONS, S).data.buffer);
  sprites = [];
  for (let r = 0; r < ROTATIONS; r++) {
    const off: number[] = [], rgba: number[] = [];
    for (let y = 0; y < S; y++) {
      for (let x = 0; x < S; x++) {
        const v = src[y * S * ROTATIONS + r * S + x];
        if (v >>> 24 > 24) { off.push(x - (S >> 1), y - (S >> 1)); rgba.push(v); }
      }
    }
    sprites.push({ off: Int16Array.from(off), rgba: Uint32Array.from(rgba) });
  }
  spriteDpr = dpr;
}

function drawBase() {
  if (!ctx || width === 0) return;
  const k = t.k;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#0f1720';
  ctx.fillRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * t.x, dpr * t.y);
  if (spherePath) { ctx.fillStyle = '#0d2436'; ctx.fill(spherePath); }
  if (gratPath) { ctx.strokeStyle = 'rgba(143,160,178,0.13)'; ctx.lineWidth = 0.6 / k; ctx.stroke(gratPath); }
  if (landPath) {
    ctx.fillStyle = '#24384a'; ctx.fill(landPath);
    ctx.strokeStyle = '#3b5369'; ctx.lineWidth = 0.7 / k; ctx.stroke(landPath);
  }
  baseDirty = false;
}

/** A 1-pixel line into the buffer (Bresenham), clipped to it. */
function line(b: Uint32Array, W: number, H: number, x0: number, y0: number, x1: number, y1: number, rgba = TRAIL_RGBA) {
  x0 |= 0; y0 |= 0; x1 |= 0; y1 |= 0;
  if ((x0 < 0 && x1 < 0) || (y0 < 0 && y1 < 0) || (x0 >= W && x1 >= W) || (y0 >= H && y1 >= H)) return;
  const dx = Math.abs(x1 - x0), dy = -Math.abs(y1 - y0);
  if (dx - dy > 4 * (W + H)) return;
  const sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  let err = dx + dy;
  for (;;) {
    if (x0 >= 0 && x0 < W && y0 >= 0 && y0 < H) b[y0 * W + x0] = rgba;
    if (x0 === x1 && y0 === y1) return;
    const e2 = 2 * err;
    if (e2 >= dy) { err += dy; x0 += sx; }
    if (e2 <= dx) { err += dx; y0 += sy; }
  }
}

function drawPilots() {
  if (!octx || width === 0) return;
  const W = octx.canvas.width, H = octx.canvas.height;
  if (!pixels || pixels.width !== W || pixels.height !== H) {
    pixels = new ImageData(W, H);
    buf32 = new Uint32Array(pixels.data.buffer);
  }
  if (spriteDpr !== dpr) buildSprites();
  const b = buf32!;
  b.fill(0);
  const k = t.k, tx = t.x, ty = t.y;
  // Visible part of the map in unzoomed coordinates, to skip what is off screen.
  const m = 20 / k;
  const x0 = -tx / k - m, y0 = -ty / k - m, x1 = (width - tx) / k + m, y1 = (height - ty) / k + m;
  const half = width / 2;
  const oldest = latest - TRAIL_SECONDS;
  const sk = dpr * k, sx0 = dpr * tx, sy0 = dpr * ty;
  for (const p of pilots.values()) {
    if (!p.shown || p.tn === 0 || p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1) continue;
    let started = false, px = 0, py = 0;
    for (let i = 0; i < p.tn; i++) {
      const j = (p.th + TRAIL_POINTS - p.tn + i) % TRAIL_POINTS;
      if (p.tt[j] < oldest) continue;
      const x = p.txy[2 * j], y = p.txy[2 * j + 1];
      if (started && Math.abs(x - px) < half) line(b, W, H, sx0 + sk * px, sy0 + sk * py, sx0 + sk * x, sy0 + sk * y);
      started = true; px = x; py = y;
    }
    if (started && Math.abs(p.x - px) < half) line(b, W, H, sx0 + sk * px, sy0 + sk * py, sx0 + sk * p.x, sy0 + sk * p.y);
  }
  for (const tr of selectedTracks) {
    let prev: [number, number] | null = null;
    for (let i = 0; i + 1 < tr.length; i += 2) {
      const q = project(tr[i], tr[i + 1]);
      if (prev && Math.abs(q[0] - prev[0]) < half) {
        line(b, W, H, sx0 + sk * prev[0], sy0 + sk * prev[1], sx0 + sk * q[0], sy0 + sk * q[1], TRACK_RGBA);
      }
      prev = q;
    }
  }
  const turn = ROTATIONS / (2 * Math.PI);
  for (const p of pilots.values()) {
    if (!p.shown || p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1) continue;
    const cx = Math.round(sx0 + sk * p.x), cy = Math.round(sy0 + sk * p.y);
    const r = ((Math.round(p.a * turn) % ROTATIONS) + ROTATIONS) % ROTATIONS;
    const sp = sprites[r];
    const off = sp.off, rgba = sp.rgba;
    for (let i = 0, n = rgba.length; i < n; i++) {
      const x = cx + off[2 * i], y = cy + off[2 * i + 1];
      if (x < 0 || x >= W || y < 0 || y >= H) continue;
      const at = y * W + x, v = rgba[i];
      if (v >>> 24 >= b[at] >>> 24 || b[at] === TRAIL_RGBA) b[at] = v;
    }
  }
  octx.putImageData(pixels, 0, 0);
  // The hovered and the selected pilot, ringed.
  octx.setTransform(dpr, 0, 0, dpr, 0, 0);
  for (const p of [hovered, selected ? pilots.get(selected) : null]) {
    if (!p || !p.shown) continue;
    octx.beginPath();
    octx.arc(tx + k * p.x, ty + k * p.y, 10, 0, 2 * Math.PI);
    octx.strokeStyle = '#ffb547'; octx.lineWidth = 1.5; octx.stroke();
  }
  octx.setTransform(1, 0, 0, 1, 0, 0);
}

function draw() {
  if (!ctx || width === 0 || !visible()) return;
  if (baseDirty) drawBase();
  drawPilots();
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
  const log = selectedFlights === null ? null : h('div', { class: 'flight-log' },
    h('h4', {}, `Flight log (${selectedFlights.length} recent)`),
    selectedFlights.length === 0 ? h('p', {}, 'no flights recorded') :
      h('ol', {}, ...selectedFlights.map((f) => h('li', { 'data-flight': f.id },
        `${utc(f.start)} · ${int(f.duration_s / 60)} min · ${f.distance_nm.toFixed(1)} nm · ${f.model.split('/').pop()?.replace(/\.xml$/, '') ?? f.model}${f.end === null ? ' (flying)' : ''}`))));
  $('details-body').replaceChildren(h('h3', {}, selected), p ? dl : h('p', {}, 'left'), log ?? '');
  box.hidden = false;
}

async function select_(cs: string | null) {
  selected = cs;
  selectedExtra = null;
  selectedFlights = null;
  selectedTracks = [];
  showDetails();
  scheduleDraw();
  if (!cs) return;
  const r = await getJson<Snapshot>(`/api/pilots?callsign=${encodeURIComponent(cs)}`);
  if (selected !== cs) return;
  selectedExtra = r.body?.pilots?.find((q) => q.callsign === cs) ?? null;
  showDetails();
  await loadLog(cs);
}

/** One flight's track, alone on the map. */
async function showFlight(id: number) {
  const cs = selected;
  const t = await getJson<FlightBody>(`/api/flights/${id}`);
  if (selected !== cs || !t.body) return;
  const c = t.body.track.geometry.coordinates;
  const ll = new Float32Array(2 * c.length);
  c.forEach(([lon, lat], i) => { ll[2 * i] = lon; ll[2 * i + 1] = lat; });
  selectedTracks = [ll];
  scheduleDraw();
}

/** The callsign's recent flights from the flight log, and today's tracks on the map. */
async function loadLog(cs: string) {
  const r = await getJson<FlightsBody>(`/api/flights?callsign=${encodeURIComponent(cs)}&limit=20`);
  if (selected !== cs || !r.body) return; // no flight log in this process: nothing shown
  selectedFlights = r.body.flights;
  showDetails();
  const midnight = Math.floor(r.body.generated_at / 86400) * 86400;
  const today = r.body.flights.filter((f) => (f.end ?? r.body!.generated_at) >= midnight).slice(0, MAX_TRACKS);
  const tracks: Float32Array[] = [];
  for (const f of today) {
    const t = await getJson<FlightBody>(`/api/flights/${f.id}`);
    if (selected !== cs) return;
    const c = t.body?.track.geometry.coordinates ?? [];
    const ll = new Float32Array(2 * c.length);
    c.forEach(([lon, lat], i) => { ll[2 * i] = lon; ll[2 * i + 1] = lat; });
    tracks.push(ll);
  }
  selectedTracks = tracks;
  scheduleDraw();
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
    const data = JSON.parse(e.data) as never;
    const t1 = performance.now();
    apply(data);
    const t2 = performance.now();
    draw();
    if (mouse) rehover();
    const t3 = performance.now();
    const ms = t3 - t0;
    lastSplit = { parse: t1 - t0, apply: t2 - t1, draw: t3 - t2 };
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
  ctx = c.getContext('2d', { alpha: false })!;
  octx = ($('pilots') as HTMLCanvasElement).getContext('2d', { willReadFrequently: false })!;
  zoomer.on('zoom', (e: { transform: typeof t }) => {
    t = e.transform;
    baseDirty = true;
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
  // A flight in the log: draw its track alone (any day's).
  $('details-body').addEventListener('click', (e) => {
    const li = (e.target as HTMLElement).closest('li[data-flight]');
    const id = li?.getAttribute('data-flight');
    if (id) void showFlight(Number(id));
  });
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
  /** The selected callsign's flight log as shown, and the track points drawn. */
  log() {
    return {
      flights: selectedFlights?.map((f) => ({ id: f.id, end: f.end, samples: f.samples })) ?? null,
      trackPoints: selectedTracks.map((t) => t.length / 2),
    };
  },
  get lastApplyMs() { return lastApplyMs; },
  /** The last update's time split: JSON.parse, applying to the state, redrawing. */
  get lastSplitMs() { return { ...lastSplit }; },
  get applyMs() { return applyMs.slice(); },
  get streamChars() { return streamChars; },
  get streamEvents() { return streamEvents; },
  get snapshots() { return snapshots; },
  get zoom() { return { k: t.k, x: t.x, y: t.y }; },
};
