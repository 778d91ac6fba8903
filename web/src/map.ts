// The live map: world outlines drawn with d3-geo on a canvas, every pilot its class's
// symbol (symbols.ts) turned to its heading with a short trail, dense areas clustered
// into count bubbles at low zoom, airports (airports.ts) when zoomed in; fed by
// /api/pilots/stream. Its view (centre, zoom, selection, panel, filters) lives in the
// URL (mapview.ts).

import { geoNaturalEarth1, geoPath, geoGraticule10, type GeoPermissibleObjects, type GeoSphere } from 'd3-geo';
import { select } from 'd3-selection';
import { zoom, zoomIdentity } from 'd3-zoom';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import { $, h, int, utc, ago, getJson } from './util';
import { CLASSES, LABELS, classIndex, buildSprites, type Sprite, type Class } from './symbols';
import { airportsWanted, drawAirports, initAirports } from './airports';
import * as mv from './mapview';
import type { components } from './api.gen';

type Schemas = components['schemas'];
/** A pilot as /api/pilots and the stream's `joined` and `changed` carry it. */
export type ApiPilot = Schemas['Pilot'];
type ChatLine = Schemas['ChatLine'];
type Snapshot = Schemas['PilotsBody'];
/** A `moved` entry: callsign, lat, lon, alt_ft, heading, ground_speed_kt (the document says only "array"). */
type Moved = [string, number, number, number, number, number];
type Update = Omit<Schemas['Update'], 'moved'> & { moved?: Moved[] };

/** Trail: one point every TRAIL_STEP seconds, at most TRAIL_POINTS (5 minutes). */
const TRAIL_POINTS = 30;
const TRAIL_STEP = 10;
const TRAIL_SECONDS = TRAIL_POINTS * TRAIL_STEP;
/** Hit-test grid cell, in unzoomed projection pixels. */
const CELL = 8;
/** Hover radius in screen pixels. */
const HIT_PX = 10;

export interface Pilot {
  callsign: string; model: string; aircraft: string; key: string;
  /** Class index into CLASSES, and the latest full pilot object (joined or changed). */
  cls: number; info: ApiPilot;
  /** Last frame: device-pixel screen position, and what was drawn (a class index, CLUSTERED or NOT_DRAWN). */
  sx: number; sy: number; drawn: number;
  lat: number; lon: number; alt_ft: number; heading: number; ground_speed_kt: number;
  local: boolean; relay: string | null; online_since: number;
  /** Projected position (unzoomed canvas CSS pixels) and the screen angle of its heading. */
  x: number; y: number; a: number;
  /** Trail ring: lon/lat, projected x/y, and time of each point. */
  tll: Float32Array; txy: Float32Array; tt: Uint32Array; tn: number; th: number;
  shown: boolean;
}

const NOT_DRAWN = -1;
const CLUSTERED = -2;
/** Clustering: below this zoom, a screen cell of CLUSTER_PX with at least CLUSTER_MIN pilots is drawn as one bubble. */
const CLUSTER_K = 32;
const CLUSTER_PX = 48;
const CLUSTER_MIN = 6;
/** The deepest zoom: a few kilometres across. */
const MAX_K = 8192;

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
const SPHERE: GeoSphere = { type: 'Sphere' };
let land: GeoPermissibleObjects | null = null;
/** Natural Earth 1:50m land, read once the map is zoomed in to FINE_K (null until then). */
let land50: GeoPermissibleObjects | null = null;
let land50Asked = false;
let land50Path: Path2D | null = null;
const FINE_K = 6;
let baseMs = 0;
let landPath: Path2D | null = null, spherePath: Path2D | null = null, gratPath: Path2D | null = null;
let t = zoomIdentity;
const zoomer = zoom<HTMLCanvasElement, unknown>().scaleExtent([1, MAX_K]);

let grid = new Map<number, Pilot[]>();
let gridDirty = true;
let mouse: [number, number] | null = null;
let hovered: Pilot | null = null;
let hoveredBubble: Bubble | null = null;
let selected: string | null = null;
let selectedExtra: ApiPilot | null = null;
/** The selected callsign's chat lines (from /api/chat, then the stream), oldest first. */
let selectedChat: ChatLine[] = [];
/** The map's view as the URL holds it (centre and zoom are read from the zoom transform). */
export const view: mv.MapView = mv.defaults();
/** A view from the URL waiting for the map to have a size. */
let pendingView: mv.MapView | null = null;
/** What the panels (panels.ts) listen to. */
export const listeners = {
  update: [] as (() => void)[],
  /** A snapshot arrived (the stream connected or reconnected). */
  snapshot: [] as (() => void)[],
  chat: [] as ((lines: ChatLine[]) => void)[],
  view: [] as (() => void)[],
};

/** The flight log of the selected callsign (null: none, or no flight log here). */
type FlightEntry = Schemas['FlightEntry'];
type FlightsBody = Schemas['FlightsBody'];
type FlightBody = Schemas['FlightBody'];
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
const splits: { parse: number; apply: number; draw: number }[] = [];
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

function keyOf(a: ApiPilot): string {
  return `${a.callsign}\n${a.aircraft ?? ''}\n${a.aircraft_name ?? ''}\n${a.model ?? ''}`.toLowerCase();
}

function add(a: ApiPilot, now: number) {
  const p: Pilot = {
    callsign: a.callsign, model: a.model ?? '', aircraft: a.aircraft ?? '',
    key: keyOf(a), cls: classIndex(a.class), info: a, sx: 0, sy: 0, drawn: NOT_DRAWN,
    lat: a.lat, lon: a.lon, alt_ft: a.alt_ft, heading: a.heading, ground_speed_kt: a.ground_speed_kt,
    local: a.local, relay: a.relay ?? null, online_since: a.online_since,
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
  if (u.changed) {
    for (const c of u.changed) {
      const p = pilots.get(c.callsign);
      if (!p) continue;
      // `changed` does not carry chat, rate or lag: keep what `joined` said.
      p.info = { ...p.info, ...c, chat: p.info.chat, rate_hz: p.info.rate_hz, lag_s: p.info.lag_s };
      p.cls = classIndex(p.info.class);
      p.key = keyOf(p.info);
      const shown = matches(p);
      if (shown !== p.shown) { shownCount += shown ? 1 : -1; p.shown = shown; }
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
        if (p.drawn === CLUSTERED) continue;
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
  // Keep the same centre and zoom when the map changes size (a panel opens, a phone turns).
  const was = width > 0 && t.k > 1 ? centre() : null;
  width = w; height = hh; dpr = window.devicePixelRatio || 1;
  const c = canvas();
  c.width = Math.round(w * dpr); c.height = Math.round(hh * dpr);
  const o = octx.canvas;
  o.width = c.width; o.height = c.height;
  baseDirty = true;
  projection.fitExtent([[4, 4], [w - 4, hh - 4]], SPHERE);
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
  // Keep the zoom inside the new extent (or take the one a link asked for).
  if (!pendingView && was) { pendingView = { ...mv.defaults(), centre: was, zoom: t.k }; }
  if (pendingView) applyPendingView(); else select(c).call(zoomer.transform, t);
  draw();
}

function buildPaths() {
  const path = geoPath(projection);
  spherePath = new Path2D(path(SPHERE) ?? '');
  gratPath = new Path2D(path(geoGraticule10()) ?? '');
  landPath = land ? new Path2D(path(land) ?? '') : null;
  land50Path = land50 ? new Path2D(path(land50) ?? '') : null;
  baseDirty = true;
}

// Drawing. The world goes on the base canvas, redrawn only when the view changes. The
// pilots and their trails go on an overlay canvas, written as pixels into one
// ImageData buffer and put at once: with 10,000 pilots that takes a few milliseconds,
// where 10,000 canvas path fills take hundreds in a software-rendered canvas.

/** Sprites per class, one per 5° of heading: pixel offsets from the centre and RGBA values. */
const ROTATIONS = 72;
let sprites: Sprite[][] = [];
let spriteDpr = 0;
let pixels: ImageData | null = null;
let buf32: Uint32Array | null = null;
const TRAIL_RGBA = 0x9047b5ff; // rgba(255,181,71,0.56), little-endian
const TRACK_RGBA = 0xe6ffc850; // rgba(80,200,255,0.9): the selected pilot's tracks today
let baseDirty = true;

/** The map's visible area as west, south, east, north boxes (the whole world when most of it shows). */
function viewBoxes(): number[][] {
  if (t.k < 2.5) return [[-180, -90, 180, 90]];
  let w = 180, s = 90, e = -180, n = -90, ok = 0;
  for (let i = 0; i <= 4; i++) {
    for (let j = 0; j <= 4; j++) {
      const ux = ((i / 4) * width - t.x) / t.k, uy = ((j / 4) * height - t.y) / t.k;
      const ll = projection.invert?.([ux, uy]);
      if (!ll || !isFinite(ll[0]) || !isFinite(ll[1])) continue;
      const back = project(ll[0], ll[1]);
      if (Math.abs(back[0] - ux) > 0.5 || Math.abs(back[1] - uy) > 0.5) continue; // off the globe
      w = Math.min(w, ll[0]); e = Math.max(e, ll[0]); s = Math.min(s, ll[1]); n = Math.max(n, ll[1]); ok++;
    }
  }
  if (ok < 2) return [];
  const mx = (e - w) * 0.1 + 0.01, my = (n - s) * 0.1 + 0.01;
  return [[Math.max(-180, w - mx), Math.max(-90, s - my), Math.min(180, e + mx), Math.min(90, n + my)]];
}

/** The map's centre, latitude and longitude. */
function centre(): [number, number] | null {
  const ll = projection.invert?.([(width / 2 - t.x) / t.k, (height / 2 - t.y) / t.k]);
  return ll && isFinite(ll[0]) && isFinite(ll[1]) ? [ll[1], ll[0]] : null;
}

function drawBase() {
  if (!ctx || width === 0) return;
  const t0 = performance.now();
  const k = t.k;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#0f1720';
  ctx.fillRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * t.x, dpr * t.y);
  if (spherePath) { ctx.fillStyle = '#0d2436'; ctx.fill(spherePath); }
  if (gratPath) { ctx.strokeStyle = 'rgba(143,160,178,0.13)'; ctx.lineWidth = 0.6 / k; ctx.stroke(gratPath); }
  const lp = k >= FINE_K && land50Path ? land50Path : landPath;
  if (lp) {
    ctx.fillStyle = '#24384a'; ctx.fill(lp);
    ctx.strokeStyle = '#3b5369'; ctx.lineWidth = 0.7 / k; ctx.stroke(lp);
  }
  if (k >= FINE_K && !land50Asked) {
    land50Asked = true;
    void fetch('/land-50m.json').then((r) => r.json()).then((topo: Topology) => {
      land50 = feature(topo, topo.objects.land);
      buildPaths();
      scheduleDraw();
    }).catch(() => { land50Asked = false; });
  }
  drawAirports(ctx, dpr, k, (lon, lat) => { const p = project(lon, lat); return [t.x + k * p[0], t.y + k * p[1]]; }, width, height);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  baseDirty = false;
  baseMs = performance.now() - t0;
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

// Clustering state, reused between frames: per screen cell of CLUSTER_PX the count and
// the sum of positions; the bubbles drawn (CSS pixels) for hit tests.
let cellN = new Int32Array(0), cellP = new Int32Array(0), cellX = new Float64Array(0), cellY = new Float64Array(0);
interface Bubble { x: number; y: number; r: number; n: number }
let bubbles: Bubble[] = [];
const bubbleImages = new Map<string, HTMLCanvasElement>();

function bubbleLabel(n: number): string {
  return n < 1000 ? String(n) : n < 10000 ? `${(n / 1000).toFixed(1)}k` : `${Math.round(n / 1000)}k`;
}
function bubbleRadius(n: number): number {
  return Math.min(24, 10 + 3.2 * Math.log10(n));
}
function bubbleImage(n: number): HTMLCanvasElement {
  const label = bubbleLabel(n);
  const key = `${label}@${dpr}`;
  let c = bubbleImages.get(key);
  if (c) return c;
  const r = bubbleRadius(n);
  const S = Math.ceil((2 * r + 4) * dpr);
  c = document.createElement('canvas');
  c.width = S; c.height = S;
  const a = c.getContext('2d')!;
  a.setTransform(dpr, 0, 0, dpr, S / 2, S / 2);
  a.beginPath(); a.arc(0, 0, r, 0, 2 * Math.PI);
  a.fillStyle = 'rgba(255,181,71,0.85)'; a.fill();
  a.lineWidth = 2; a.strokeStyle = 'rgba(255,216,154,0.9)'; a.stroke();
  a.fillStyle = '#1a1206';
  a.font = `700 ${label.length > 3 ? 10 : 11}px system-ui, sans-serif`;
  a.textAlign = 'center'; a.textBaseline = 'middle';
  a.fillText(label, 0, 0.5);
  if (bubbleImages.size > 400) bubbleImages.clear();
  bubbleImages.set(key, c);
  return c;
}

function drawPilots() {
  if (!octx || width === 0) return;
  const W = octx.canvas.width, H = octx.canvas.height;
  if (!pixels || pixels.width !== W || pixels.height !== H) {
    pixels = new ImageData(W, H);
    buf32 = new Uint32Array(pixels.data.buffer);
  }
  if (spriteDpr !== dpr) { sprites = buildSprites(dpr, ROTATIONS); spriteDpr = dpr; }
  const b = buf32!;
  b.fill(0);
  const k = t.k, tx = t.x, ty = t.y;
  // Visible part of the map in unzoomed coordinates, to skip what is off screen.
  const m = 20 / k;
  const x0 = -tx / k - m, y0 = -ty / k - m, x1 = (width - tx) / k + m, y1 = (height - ty) / k + m;
  const half = width / 2;
  const oldest = latest - TRAIL_SECONDS;
  const sk = dpr * k, sx0 = dpr * tx, sy0 = dpr * ty;
  const sel = selected ? pilots.get(selected) ?? null : null;
  // Which pilots are in view, where on the screen; at low zoom, how many per cell.
  const clustering = k < CLUSTER_K;
  const C = CLUSTER_PX * dpr;
  const cols = Math.ceil(W / C) + 2, rows = Math.ceil(H / C) + 2;
  if (clustering) {
    if (cellN.length < cols * rows) { cellN = new Int32Array(cols * rows); cellX = new Float64Array(cols * rows); cellY = new Float64Array(cols * rows); }
    cellN.fill(0, 0, cols * rows); cellX.fill(0, 0, cols * rows); cellY.fill(0, 0, cols * rows);
  }
  const cellOf = (p: Pilot) => (Math.floor(p.sy / C) + 1) * cols + Math.floor(p.sx / C) + 1;
  for (const p of pilots.values()) {
    if (!p.shown || p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1) { p.drawn = NOT_DRAWN; continue; }
    p.sx = sx0 + sk * p.x; p.sy = sy0 + sk * p.y;
    p.drawn = p.cls;
    if (clustering && p !== sel) {
      const c = cellOf(p);
      cellN[c]++; cellX[c] += p.sx; cellY[c] += p.sy;
    }
  }
  bubbles = [];
  if (clustering) {
    // Neighbouring cells whose pilots' mean positions are closer than half a cell are one
    // cluster (a group on a cell's edge is not cut in two): union-find over the cells.
    const n = cols * rows;
    if (cellP.length < n) cellP = new Int32Array(n);
    for (let c = 0; c < n; c++) cellP[c] = c;
    const root = (c: number) => { while (cellP[c] !== c) { cellP[c] = cellP[cellP[c]]; c = cellP[c]; } return c; };
    const near = (C / 2) ** 2;
    for (let c = 0; c < n; c++) {
      if (!cellN[c]) continue;
      const x = cellX[c] / cellN[c], y = cellY[c] / cellN[c];
      for (const d of [1, cols - 1, cols, cols + 1]) {
        const e = c + d;
        if (e >= n || !cellN[e] || ((d === 1 || d === cols + 1) && e % cols === 0) || (d === cols - 1 && c % cols === 0)) continue;
        if ((cellX[e] / cellN[e] - x) ** 2 + (cellY[e] / cellN[e] - y) ** 2 >= near) continue;
        const a = root(c), b = root(e);
        if (a !== b) cellP[b] = a;
      }
    }
    // Sums per root.
    for (let c = 0; c < n; c++) {
      const r = root(c);
      if (r === c || !cellN[c]) continue;
      cellN[r] += cellN[c]; cellX[r] += cellX[c]; cellY[r] += cellY[c];
    }
    for (const p of pilots.values()) {
      if (p.drawn !== NOT_DRAWN && p !== sel && cellN[root(cellOf(p))] >= CLUSTER_MIN) p.drawn = CLUSTERED;
    }
    for (let c = 0; c < n; c++) {
      const m = cellN[c];
      if (m >= CLUSTER_MIN && root(c) === c) bubbles.push({ x: cellX[c] / m / dpr, y: cellY[c] / m / dpr, r: bubbleRadius(m), n: m });
    }
  }
  for (const p of pilots.values()) {
    if (p.drawn < 0 || p.tn === 0) continue;
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
    if (p.drawn < 0) continue;
    const cx = Math.round(p.sx), cy = Math.round(p.sy);
    const r = ((Math.round(p.a * turn) % ROTATIONS) + ROTATIONS) % ROTATIONS;
    const sp = sprites[p.cls][r];
    const off = sp.off, rgba = sp.rgba;
    for (let i = 0, n = rgba.length; i < n; i++) {
      const x = cx + off[2 * i], y = cy + off[2 * i + 1];
      if (x < 0 || x >= W || y < 0 || y >= H) continue;
      const at = y * W + x, v = rgba[i];
      if (v >>> 24 >= b[at] >>> 24 || b[at] === TRAIL_RGBA) b[at] = v;
    }
  }
  octx.putImageData(pixels, 0, 0);
  octx.setTransform(1, 0, 0, 1, 0, 0);
  for (const q of bubbles) {
    const img = bubbleImage(q.n);
    octx.drawImage(img, Math.round(q.x * dpr - img.width / 2), Math.round(q.y * dpr - img.height / 2));
  }
  // The hovered and the selected pilot, ringed.
  octx.setTransform(dpr, 0, 0, dpr, 0, 0);
  for (const p of [hovered, sel]) {
    if (!p || !p.shown) continue;
    octx.beginPath();
    octx.arc(tx + k * p.x, ty + k * p.y, 12, 0, 2 * Math.PI);
    octx.strokeStyle = p === sel ? '#50c8ff' : '#ffb547'; octx.lineWidth = 1.5; octx.stroke();
  }
  if (hoveredBubble) {
    octx.beginPath();
    octx.arc(hoveredBubble.x, hoveredBubble.y, hoveredBubble.r + 3, 0, 2 * Math.PI);
    octx.strokeStyle = '#ffffff'; octx.lineWidth = 1.5; octx.stroke();
  }
  octx.setTransform(1, 0, 0, 1, 0, 0);
}

/** The bubble under a canvas CSS pixel, if any. */
function bubbleAt(mx: number, my: number): Bubble | null {
  let best: Bubble | null = null, bestD = Infinity;
  for (const q of bubbles) {
    const d = (q.x - mx) ** 2 + (q.y - my) ** 2;
    if (d <= (q.r + 2) ** 2 && d < bestD) { bestD = d; best = q; }
  }
  return best;
}

/** Zooms in on a bubble: its pilots come apart. */
function zoomInto(q: Bubble) {
  const k = Math.min(MAX_K, Math.max(t.k * 4, 4));
  const ux = (q.x - t.x) / t.k, uy = (q.y - t.y) / t.k;
  select(canvas()).call(zoomer.transform, zoomIdentity.translate(width / 2 - k * ux, height / 2 - k * uy).scale(k));
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
  let sx: number, sy: number;
  if (hoveredBubble) {
    const q = hoveredBubble;
    tip.replaceChildren(h('b', {}, `${int(q.n)} pilots`), '\n', 'click to zoom in');
    sx = q.x; sy = q.y;
  } else if (hovered && hovered.shown) {
    const p = hovered;
    tip.replaceChildren(
      h('b', {}, p.callsign), '\n',
      p.info.aircraft_name || p.aircraft || p.model || 'unknown aircraft', '\n',
      `${int(p.alt_ft)} ft · ${int(p.ground_speed_kt)} kt`,
    );
    sx = t.x + t.k * p.x; sy = t.y + t.k * p.y;
  } else { tip.hidden = true; return; }
  tip.hidden = false;
  const tw = tip.offsetWidth, th = tip.offsetHeight;
  let left = sx + 14, top = sy + 14;
  if (left + tw > width) left = sx - 14 - tw;
  if (top + th > height) top = sy - 14 - th;
  tip.style.left = `${Math.max(0, left)}px`;
  tip.style.top = `${Math.max(0, top)}px`;
}

function rehover() {
  hoveredBubble = mouse ? bubbleAt(mouse[0], mouse[1]) : null;
  hovered = mouse && !hoveredBubble ? hit(mouse[0], mouse[1]) : null;
  showTooltip();
}

function row(dl: HTMLElement, k: string, v: string) {
  dl.append(h('dt', {}, k), h('dd', {}, v));
}

const MODES = ['off', 'standby', 'test', 'ground', 'on', 'alt'];
function transponder(x: ApiPilot['transponder']): string {
  if (!x) return '–';
  const code = x.code === null ? '–' : x.code === -9999 ? 'off' : String(x.code).padStart(4, '0');
  const mode = x.mode === null || x.mode === undefined ? '' : ` · ${MODES[x.mode] ?? `mode ${x.mode}`}`;
  return `${code}${mode}${x.ident ? ' · IDENT' : ''}${x.altitude_ft !== null ? ` · ${int(x.altitude_ft)} ft` : ''}`;
}
export function freq(f: number | null | undefined): string {
  return f === null || f === undefined ? '–' : `${f.toFixed(3).replace(/0{1,2}$/, '')} MHz`;
}

function showDetails() {
  const box = $('details');
  const p = selected ? pilots.get(selected) : undefined;
  if (!selected) { box.hidden = true; return; }
  const dl = h('dl');
  const x = selectedExtra;
  const info = p?.info ?? x;
  if (p) {
    row(dl, 'aircraft', p.info.aircraft_name || p.aircraft || '–');
    row(dl, 'class', LABELS[CLASSES[p.cls]]);
    row(dl, 'model', p.model || '–');
    row(dl, 'position', `${p.lat.toFixed(5)}, ${p.lon.toFixed(5)}`);
    row(dl, 'altitude', `${int(p.alt_ft)} ft`);
    row(dl, 'heading', `${int(p.heading)}°`);
    row(dl, 'speed', `${int(p.ground_speed_kt)} kt`);
  }
  row(dl, 'pitch', x && x.pitch !== null && x.pitch !== undefined ? `${x.pitch.toFixed(1)}°` : '–');
  row(dl, 'roll', x && x.roll !== null && x.roll !== undefined ? `${x.roll.toFixed(1)}°` : '–');
  if (info) {
    row(dl, 'frequency', freq(info.frequency_mhz));
    row(dl, 'transponder', transponder(info.transponder));
    row(dl, 'protocol', info.protocol ? `v${info.protocol}` : '–');
    if (info.livery) row(dl, 'livery', info.livery);
    if (x?.rate_hz !== null && x?.rate_hz !== undefined) row(dl, 'rate', `${x.rate_hz.toFixed(1)} Hz`);
  }
  if (p) {
    row(dl, 'via', p.local ? 'this relay' : `relay ${p.relay ?? '?'}`);
    row(dl, 'online since', `${utc(p.online_since)} (${ago(p.online_since, latest)})`);
  }
  if (x?.last_seen) row(dl, 'last seen', ago(x.last_seen, latest));
  const chat = h('div', { class: 'pilot-chat' }, h('h4', {}, `Chat (${selectedChat.length})`),
    selectedChat.length === 0 ? h('p', {}, 'nothing said recently') :
      h('ol', {}, ...selectedChat.slice(-20).reverse().map((l) => h('li', {}, h('time', {}, utc(l.at).slice(11, 16)), ' ', l.text))));
  const log = selectedFlights === null ? null : h('div', { class: 'flight-log' },
    h('h4', {}, `Flight log (${selectedFlights.length} recent)`),
    selectedFlights.length === 0 ? h('p', {}, 'no flights recorded') :
      h('ol', {}, ...selectedFlights.map((f) => h('li', { 'data-flight': f.id },
        `${utc(f.start)} · ${int(f.duration_s / 60)} min · ${f.distance_nm.toFixed(1)} nm · ${f.aircraft_name || (f.model.split('/').pop()?.replace(/\.xml$/, '') ?? f.model)}`,
        f.departure || f.arrival ? ` · ${f.departure ?? '?'} → ${f.arrival ?? (f.end === null ? '…' : '?')}` : '',
        f.end === null ? ' (flying)' : '',
        ' ', h('a', { href: `/api/flights/${f.id}/gpx`, download: '', class: 'dl' }, 'GPX'),
        ' ', h('a', { href: `/api/flights/${f.id}/kml`, download: '', class: 'dl' }, 'KML')))),
    selectedFlights.length === 0 ? '' : h('p', {}, h('a', { href: `/api/callsigns/${encodeURIComponent(selected)}/csv`, download: '', class: 'dl' }, 'All flights as CSV')));
  $('details-body').replaceChildren(h('h3', {}, selected), p ? dl : h('p', {}, 'not on the map now'), chat, log ?? '');
  const follow = $('details-follow');
  follow.setAttribute('aria-pressed', String(view.follow));
  box.hidden = false;
}

/** Selects a pilot (null: none): its details, chat lines and flight log. */
export async function select_(cs: string | null, follow = false) {
  if (cs !== selected) {
    selectedExtra = null;
    selectedFlights = null;
    selectedTracks = [];
    selectedChat = [];
  }
  selected = cs;
  view.sel = cs;
  view.follow = cs !== null && follow;
  showDetails();
  scheduleDraw();
  viewChanged();
  if (!cs) return;
  if (view.follow) followSelected();
  const [r, chat] = await Promise.all([
    getJson<Snapshot>(`/api/pilots?callsign=${encodeURIComponent(cs)}`),
    getJson<Schemas['ChatBody']>(`/api/chat?callsign=${encodeURIComponent(cs)}&limit=100`),
  ]);
  if (selected !== cs) return;
  selectedExtra = r.body?.pilots?.find((q) => q.callsign === cs) ?? null;
  const ids = new Set(selectedChat.map((l) => l.id));
  selectedChat = [...(chat.body?.lines ?? []).filter((l) => !ids.has(l.id)), ...selectedChat].sort((a, b) => a.id - b.id);
  showDetails();
  await loadLog(cs);
}

/** Centres the map on the selected pilot, at the same zoom. */
function followSelected() {
  const p = selected ? pilots.get(selected) : null;
  if (!p || !isFinite(p.x) || width === 0) return;
  following = true;
  select(canvas()).call(zoomer.translateTo, p.x, p.y);
  following = false;
}
let following = false;

/** Centres the map on a point, zoomed in to at least `minK`. */
export function centreOn(lat: number, lon: number, minK = 1) {
  setView(lat, lon, Math.max(t.k, minK));
}

/** Centres the map on a point at zoom `k`. */
function setView(lat: number, lon: number, k: number) {
  const [x, y] = project(lon, lat);
  if (!isFinite(x) || width === 0) return;
  const z = Math.min(MAX_K, Math.max(1, k));
  select(canvas()).call(zoomer.transform, zoomIdentity.translate(width / 2 - z * x, height / 2 - z * y).scale(z));
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
  if (selected !== cs || !r.body?.flights) return; // no flight log in this process: nothing shown
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

// The view in the URL: written (replacing the history entry) a moment after it changes.
let urlTimer = 0;
function viewChanged() {
  for (const f of listeners.view) f();
  window.clearTimeout(urlTimer);
  urlTimer = window.setTimeout(remember, 250);
}

/** Writes the view into the URL while the map shows. */
export function remember() {
  window.clearTimeout(urlTimer);
  if (!visible()) return;
  const c = centre();
  view.centre = c;
  view.zoom = t.k;
  const q = mv.format(view);
  const want = `#map${q ? `?${q}` : ''}`;
  if (location.hash !== want && !(want === '#map' && location.hash === '')) history.replaceState(history.state, '', want);
}

/** The hash's query after `#map`: a link sets the view from it; the bare `#map` (the tab) keeps the view. */
export function mapFromHash(query: string | null) {
  if (query === null) { remember(); return; }
  const v = mv.parse(query);
  const { centre: _c, zoom: _z, ...rest } = v;
  Object.assign(view, rest);
  ($('pilot-filter') as HTMLInputElement).value = view.q;
  filter = view.q.trim().toLowerCase();
  refilter();
  showCount();
  if (v.sel !== selected || v.follow) void select_(v.sel, v.follow);
  pendingView = v;
  applyPendingView();
  for (const f of listeners.view) f();
}

function applyPendingView() {
  const v = pendingView;
  if (!v || width === 0) return;
  pendingView = null;
  if (v.centre && v.zoom > 1) setView(v.centre[0], v.centre[1], v.zoom);
  else select(canvas()).call(zoomer.transform, zoomIdentity);
}

function status(text: string, cls: string) {
  const el = $('stream-status');
  el.textContent = text;
  el.className = `status ${cls}`;
}

let es: EventSource | null = null;
let panelMs = 0;
function connect() {
  es?.close();
  es = new EventSource('/api/pilots/stream');
  es.onopen = () => status('live', 'live');
  const handle = <T>(apply: (data: T) => void) => (e: MessageEvent<string>) => {
    const t0 = performance.now();
    streamChars += e.data.length;
    streamEvents++;
    const data = JSON.parse(e.data) as T;
    const t1 = performance.now();
    apply(data);
    const t2 = performance.now();
    draw();
    if (mouse) rehover();
    const t3 = performance.now();
    const ms = t3 - t0;
    lastSplit = { parse: t1 - t0, apply: t2 - t1, draw: t3 - t2 };
    splits.push(lastSplit);
    if (splits.length > 600) splits.splice(0, splits.length - 600);
    lastApplyMs = ms;
    applyMs.push(ms);
    if (applyMs.length > 600) applyMs.splice(0, applyMs.length - 600);
    showCount();
    if (selected) showDetails();
    if (view.follow) followSelected();
    // The open panel (its list sorted and drawn again), timed on its own.
    const t4 = performance.now();
    for (const f of listeners.update) f();
    panelMs = performance.now() - t4;
  };
  es.addEventListener('snapshot', handle<Snapshot>((s) => { snapshots++; applySnapshot(s); for (const f of listeners.snapshot) f(); }));
  es.addEventListener('update', handle<Update>((u) => applyUpdate(u)));
  es.addEventListener('chat', ((e: MessageEvent) => {
    streamChars += e.data.length;
    streamEvents++;
    let lines: ChatLine[];
    try { lines = JSON.parse(e.data); } catch { return; }
    if (!Array.isArray(lines)) return;
    if (selected) {
      const ids = new Set(selectedChat.map((l) => l.id));
      const mine = lines.filter((l) => l.callsign === selected && !ids.has(l.id));
      if (mine.length) { selectedChat.push(...mine); showDetails(); }
    }
    for (const f of listeners.chat) f(lines);
  }));
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
  initAirports(() => { baseDirty = true; scheduleDraw(); });
  zoomer.on('zoom', (e: { transform: typeof t; sourceEvent: Event | null }) => {
    t = e.transform;
    // Dragging the map (not following, not a link) stops following.
    if (e.sourceEvent && e.sourceEvent.type !== 'wheel' && view.follow && !following) { view.follow = false; if (selected) showDetails(); }
    baseDirty = true;
    scheduleDraw();
    if (mouse) rehover();
    airportsWanted(t.k, viewBoxes());
    viewChanged();
  });
  select(c).call(zoomer).on('dblclick.zoom', null);
  c.addEventListener('mousemove', (e) => {
    mouse = [e.offsetX, e.offsetY];
    rehover();
    scheduleDraw();
  });
  c.addEventListener('mouseleave', () => { mouse = null; hovered = null; hoveredBubble = null; showTooltip(); scheduleDraw(); });
  c.addEventListener('click', (e) => {
    const q = bubbleAt(e.offsetX, e.offsetY);
    if (q) { zoomInto(q); return; }
    const p = hit(e.offsetX, e.offsetY);
    void select_(p ? p.callsign : null);
  });
  $('details-close').addEventListener('click', () => void select_(null));
  $('details-follow').addEventListener('click', () => {
    view.follow = !view.follow && selected !== null;
    if (view.follow) followSelected();
    showDetails();
    viewChanged();
  });
  // A flight in the log: draw its track alone (any day's).
  $('details-body').addEventListener('click', (e) => {
    const li = (e.target as HTMLElement).closest('li[data-flight]');
    const id = li?.getAttribute('data-flight');
    if (id) void showFlight(Number(id));
  });
  const input = $('pilot-filter') as HTMLInputElement;
  input.addEventListener('input', () => {
    view.q = input.value;
    filter = input.value.trim().toLowerCase();
    refilter();
    showCount();
    rehover();
    draw();
    viewChanged();
    for (const f of listeners.update) f();
  });
  new ResizeObserver(() => resize()).observe($('map-wrap'));
  void fetch('/land.json').then((r) => r.json()).then((topo: Topology) => {
    land = feature(topo, topo.objects.land);
    buildPaths();
    draw();
  });
  airportsWanted(t.k, viewBoxes());
  connect();
}

export function mapShown() {
  resize();
  draw();
}

/** What the panels read: the pilots, the map's centre and visible area. */
export const mapApi = {
  pilots: () => pilots.values(),
  get selected() { return selected; },
  centre,
  /** Is (lat, lon) on the screen now? */
  inView(lat: number, lon: number): boolean {
    const p = project(lon, lat);
    const x = t.x + t.k * p[0], y = t.y + t.k * p[1];
    return x >= 0 && y >= 0 && x <= width && y <= height;
  },
  className: (p: Pilot) => CLASSES[p.cls] as Class,
  changed: viewChanged,
};

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
      class: CLASSES[p.cls], aircraft_name: p.info.aircraft_name ?? null, frequency_mhz: p.info.frequency_mhz ?? null,
    };
  },
  /** What the last frame drew for a callsign: its class's symbol, `cluster` (inside a count bubble) or null (not drawn). */
  drawnClass(callsign: string): string | null {
    const p = pilots.get(callsign);
    if (!p || p.drawn === NOT_DRAWN) return null;
    return p.drawn === CLUSTERED ? 'cluster' : CLASSES[p.drawn];
  },
  /** The count bubbles of the last frame (CSS pixels of the map). */
  clusters() { return bubbles.map((q) => ({ x: q.x, y: q.y, n: q.n })); },
  /** The map's view as the URL holds it, and the centre now. */
  mapView() { return { ...view, centre: centre(), zoom: t.k, selected }; },
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
  /** Every update's split (the last 600), as applyMs. */
  get splitMs() { return splits.slice(); },
  /** The open panel's refresh after the last update (not in applyMs). */
  get lastPanelMs() { return panelMs; },
  /** The last redraw of the base canvas (land, airports), and whether the 1:50m land is in. */
  get lastBaseMs() { return baseMs; },
  get fineLand() { return land50Path !== null; },
  get applyMs() { return applyMs.slice(); },
  get streamChars() { return streamChars; },
  get streamEvents() { return streamEvents; },
  get snapshots() { return snapshots; },
  get zoom() { return { k: t.k, x: t.x, y: t.y }; },
};
