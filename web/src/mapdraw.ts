// Drawing the map. The world goes on the base canvas, redrawn only when the view
// changes. The pilots and their trails go on an overlay canvas, written as pixels into
// one ImageData buffer and put at once: with 10,000 pilots that takes a few
// milliseconds, where 10,000 canvas path fills take hundreds in a software-rendered
// canvas. Where each pilot goes is maplayout.ts's; what is drawn is the map's state.

import { geoPath, geoGraticule10, type GeoSphere } from 'd3-geo';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import { buildSprites } from './symbols';
import { drawAirports } from './airports';
import { FINE_K, TRAIL_SECONDS, project, toScreen, trailIndex, type MapState, type Pilot } from './mapstate';
import { LABEL_FONT } from './labels';
import { bubbleLabel, bubbleRadius, layout } from './maplayout';

/** The whole globe, for d3-geo. */
export const SPHERE: GeoSphere = { type: 'Sphere' };
/** Sprites per class, one per 5° of heading: pixel offsets from the centre and RGBA values. */
const ROTATIONS = 72;
const TRAIL_RGBA = 0x9047b5ff; // rgba(255,181,71,0.56), little-endian
const TRACK_RGBA = 0xe6ffc850; // rgba(80,200,255,0.9): the selected pilot's tracks today

/** The base canvas's paths for the projection as fitted now. */
export function buildPaths(s: MapState) {
  const path = geoPath(s.projection);
  s.paths.sphere = new Path2D(path(SPHERE) ?? '');
  s.paths.graticule = new Path2D(path(geoGraticule10()) ?? '');
  s.paths.land = s.land ? new Path2D(path(s.land) ?? '') : null;
  s.paths.land50 = s.land50 ? new Path2D(path(s.land50) ?? '') : null;
  s.baseDirty = true;
}

function drawBase(s: MapState) {
  const ctx = s.ctx;
  if (!ctx || s.width === 0) return;
  const t0 = performance.now();
  const { k, x: tx, y: ty } = s.t;
  const dpr = s.dpr;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#0f1720';
  ctx.fillRect(0, 0, ctx.canvas.width, ctx.canvas.height);
  ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * tx, dpr * ty);
  const { sphere, graticule } = s.paths;
  if (sphere) { ctx.fillStyle = '#0d2436'; ctx.fill(sphere); }
  if (graticule) { ctx.strokeStyle = 'rgba(143,160,178,0.13)'; ctx.lineWidth = 0.6 / k; ctx.stroke(graticule); }
  const lp = k >= FINE_K && s.paths.land50 ? s.paths.land50 : s.paths.land;
  if (lp) {
    ctx.fillStyle = '#24384a'; ctx.fill(lp);
    ctx.strokeStyle = '#3b5369'; ctx.lineWidth = 0.7 / k; ctx.stroke(lp);
  }
  if (k >= FINE_K && !s.land50Asked) {
    s.land50Asked = true;
    void fetch('/land-50m.json').then((r) => r.json()).then((topo: Topology) => {
      s.land50 = feature(topo, topo.objects.land);
      buildPaths(s);
      scheduleDraw(s);
    }).catch(() => { s.land50Asked = false; });
  }
  drawAirports(ctx, dpr, k, (lon, lat) => toScreen(s, lon, lat), s.width, s.height);
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  s.baseDirty = false;
  s.baseMs = performance.now() - t0;
}

/** A 1-pixel line into the buffer (Bresenham), clipped to it. */
export function line(b: Uint32Array, W: number, H: number, x0: number, y0: number, x1: number, y1: number, rgba = TRAIL_RGBA) {
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

function bubbleImage(s: MapState, n: number): HTMLCanvasElement {
  const dpr = s.dpr;
  const label = bubbleLabel(n);
  const key = `${label}@${dpr}`;
  let c = s.bubbleImages.get(key);
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
  if (s.bubbleImages.size > 400) s.bubbleImages.clear();
  s.bubbleImages.set(key, c);
  return c;
}

/** Callsign widths measured in the label font, kept while the map lives (bounded). */
const widths = new Map<string, number>();

function labelWidth(octx: CanvasRenderingContext2D, text: string): number {
  let w = widths.get(text);
  if (w === undefined) {
    octx.font = LABEL_FONT;
    w = octx.measureText(text).width;
    if (widths.size > 20000) widths.clear();
    widths.set(text, w);
  }
  return w;
}

/** The frame's callsign labels (maplayout.ts placed them), dark-edged to read on land and sea. */
function drawLabels(s: MapState, octx: CanvasRenderingContext2D, sel: Pilot | null) {
  if (!s.labels.length) return;
  octx.font = LABEL_FONT;
  octx.textBaseline = 'middle';
  octx.lineJoin = 'round';
  octx.lineWidth = 3;
  octx.strokeStyle = 'rgba(15,23,32,0.9)';
  for (const { p, box } of s.labels) {
    const x = box[0] + 2, y = (box[1] + box[3]) / 2;
    octx.strokeText(p.callsign, x, y);
    octx.fillStyle = p === sel ? '#50c8ff' : p === s.hovered ? '#ffb547' : '#e6edf3';
    octx.fillText(p.callsign, x, y);
  }
}

function drawPilots(s: MapState) {
  const octx = s.octx;
  if (!octx || s.width === 0) return;
  const W = octx.canvas.width, H = octx.canvas.height;
  if (!s.pixels || s.pixels.width !== W || s.pixels.height !== H) {
    s.pixels = new ImageData(W, H);
    s.buf32 = new Uint32Array(s.pixels.data.buffer);
  }
  const dpr = s.dpr;
  if (s.spriteDpr !== dpr) { s.sprites = buildSprites(dpr, ROTATIONS); s.spriteDpr = dpr; }
  const b = s.buf32!;
  b.fill(0);
  layout(s, W, H, (t) => labelWidth(octx, t));
  const { k, x: tx, y: ty } = s.t;
  const half = s.width / 2;
  const oldest = s.latest - TRAIL_SECONDS;
  const sk = dpr * k, sx0 = dpr * tx, sy0 = dpr * ty;
  const sel = s.selected ? s.pilots.get(s.selected) ?? null : null;
  for (const p of s.pilots.values()) {
    if (p.drawn < 0 || p.tn === 0) continue;
    let started = false, px = 0, py = 0;
    for (let i = 0; i < p.tn; i++) {
      const j = trailIndex(p, i);
      if (p.tt[j] < oldest) continue;
      const x = p.txy[2 * j], y = p.txy[2 * j + 1];
      if (started && Math.abs(x - px) < half) line(b, W, H, sx0 + sk * px, sy0 + sk * py, sx0 + sk * x, sy0 + sk * y);
      started = true; px = x; py = y;
    }
    if (started && Math.abs(p.x - px) < half) line(b, W, H, sx0 + sk * px, sy0 + sk * py, sx0 + sk * p.x, sy0 + sk * p.y);
  }
  for (const tr of s.selectedTracks) {
    let prev: [number, number] | null = null;
    for (let i = 0; i + 1 < tr.length; i += 2) {
      const q = project(s, tr[i], tr[i + 1]);
      if (prev && Math.abs(q[0] - prev[0]) < half) {
        line(b, W, H, sx0 + sk * prev[0], sy0 + sk * prev[1], sx0 + sk * q[0], sy0 + sk * q[1], TRACK_RGBA);
      }
      prev = q;
    }
  }
  const turn = ROTATIONS / (2 * Math.PI);
  for (const p of s.pilots.values()) {
    if (p.drawn < 0) continue;
    const cx = Math.round(p.sx), cy = Math.round(p.sy);
    const r = ((Math.round(p.a * turn) % ROTATIONS) + ROTATIONS) % ROTATIONS;
    const sp = s.sprites[p.cls][r];
    const off = sp.off, rgba = sp.rgba;
    for (let i = 0, n = rgba.length; i < n; i++) {
      const x = cx + off[2 * i], y = cy + off[2 * i + 1];
      if (x < 0 || x >= W || y < 0 || y >= H) continue;
      const at = y * W + x, v = rgba[i];
      if (v >>> 24 >= b[at] >>> 24 || b[at] === TRAIL_RGBA) b[at] = v;
    }
  }
  octx.putImageData(s.pixels, 0, 0);
  octx.setTransform(1, 0, 0, 1, 0, 0);
  for (const q of s.bubbles) {
    const img = bubbleImage(s, q.n);
    octx.drawImage(img, Math.round(q.x * dpr - img.width / 2), Math.round(q.y * dpr - img.height / 2));
  }
  // The hovered and the selected pilot, ringed.
  octx.setTransform(dpr, 0, 0, dpr, 0, 0);
  drawLabels(s, octx, sel);
  for (const p of [s.hovered, sel]) {
    if (!p || !p.shown) continue;
    octx.beginPath();
    octx.arc(tx + k * p.x, ty + k * p.y, 12, 0, 2 * Math.PI);
    octx.strokeStyle = p === sel ? '#50c8ff' : '#ffb547'; octx.lineWidth = 1.5; octx.stroke();
  }
  const hb = s.hoveredBubble;
  if (hb) {
    octx.beginPath();
    octx.arc(hb.x, hb.y, hb.r + 3, 0, 2 * Math.PI);
    octx.strokeStyle = '#ffffff'; octx.lineWidth = 1.5; octx.stroke();
  }
  octx.setTransform(1, 0, 0, 1, 0, 0);
}

/** Draws the map now (the base only when it changed), if it shows. */
export function draw(s: MapState) {
  if (!s.ctx || s.width === 0 || !s.visible()) return;
  if (s.baseDirty) drawBase(s);
  drawPilots(s);
}

/** Draws the map at the next animation frame (once, however often asked). */
export function scheduleDraw(s: MapState) {
  if (s.frame) return;
  s.frame = requestAnimationFrame(() => { s.frame = 0; draw(s); });
}
