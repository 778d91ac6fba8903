// Where the pilots go in a frame: each shown pilot's screen position and what is drawn
// for it (its class's symbol, or nothing when off screen), below zoom CLUSTER_K the
// count bubbles that stand for dense areas, and from LABEL_K the callsign labels, each
// beside its symbol where it overlaps no other label, symbol or bubble. Pure: it writes
// into the map's state (mapstate.ts), which mapdraw.ts paints and maphit.ts tests against.

import { CLUSTERED, NOT_DRAWN, type Label, type MapState, type Pilot } from './mapstate';
import { Boxes, guessWidth, type Box } from './labels';

/** Clustering: below this zoom, a screen cell of CLUSTER_PX with at least CLUSTER_MIN pilots is drawn as one bubble. */
export const CLUSTER_K = 32;
export const CLUSTER_PX = 48;
export const CLUSTER_MIN = 6;

/** Callsign labels from this zoom on (a region: Iceland fills a laptop's map at about 40). */
export const LABEL_K = 8;
/** Labels at most per frame (the first: the selected and the hovered pilot, then in join order). */
export const MAX_LABELS = 300;
/** Half a symbol's box and a label's height, CSS pixels. */
const SYMBOL_HALF = 7;
const LABEL_H = 14;

/** A bubble's label: 950, 1.2k, 12k. */
export function bubbleLabel(n: number): string {
  return n < 1000 ? String(n) : n < 10000 ? `${(n / 1000).toFixed(1)}k` : `${Math.round(n / 1000)}k`;
}

/** A bubble's radius in CSS pixels: from 10 up, at most 24. */
export function bubbleRadius(n: number): number {
  return Math.min(24, 10 + 3.2 * Math.log10(n));
}

/**
 * Lays out a frame of a `W` × `H` device-pixel overlay: sets each pilot's `sx`, `sy`
 * (device pixels) and `drawn` (its class index, CLUSTERED or NOT_DRAWN) and the map's
 * `bubbles` (CSS pixels), and from LABEL_K its `labels` (`measure`: a callsign's width in
 * CSS pixels). The selected pilot is never counted into a bubble.
 */
export function layout(s: MapState, W: number, H: number, measure: (text: string) => number = guessWidth) {
  place(s, W, H);
  s.labels = s.t.k >= LABEL_K ? labelPilots(s, measure) : [];
}

/**
 * The callsign labels of a frame laid out by `place`: each drawn pilot's to the right of
 * its symbol, else to the left, above or below, wherever it overlaps no symbol, bubble or
 * label already placed and stays on the map; none where no place is free. The selected
 * and the hovered pilot are labelled first, over other symbols if need be.
 */
export function labelPilots(s: MapState, measure: (text: string) => number): Label[] {
  const dpr = s.dpr;
  const taken = new Boxes(32);
  const out: Label[] = [];
  const g = SYMBOL_HALF + 2, h = LABEL_H / 2;
  const label = (p: Pilot) => {
    const x = p.sx / dpr, y = p.sy / dpr, w = measure(p.callsign) + 4;
    const spots: Box[] = [
      [x + g, y - h, x + g + w, y + h],
      [x - g - w, y - h, x - g, y + h],
      [x - w / 2, y - g - LABEL_H, x + w / 2, y - g],
      [x - w / 2, y + g, x + w / 2, y + g + LABEL_H],
    ];
    for (const b of spots) {
      if (b[0] < 0 || b[1] < 0 || b[2] > s.width || b[3] > s.height || !taken.claim(b)) continue;
      out.push({ p, box: b });
      return;
    }
  };
  // The selected and the hovered pilot first, over other symbols if need be.
  const first: Pilot[] = [];
  for (const p of [s.selected ? s.pilots.get(s.selected) : undefined, s.hovered ?? undefined]) {
    if (p && p.drawn >= 0 && !first.includes(p)) { first.push(p); label(p); }
  }
  for (const p of s.pilots.values()) {
    if (p.drawn < 0) continue;
    const x = p.sx / dpr, y = p.sy / dpr;
    taken.take([x - SYMBOL_HALF, y - SYMBOL_HALF, x + SYMBOL_HALF, y + SYMBOL_HALF]);
  }
  for (const q of s.bubbles) taken.take([q.x - q.r, q.y - q.r, q.x + q.r, q.y + q.r]);
  for (const p of s.pilots.values()) {
    if (out.length >= MAX_LABELS) break;
    if (p.drawn >= 0 && !first.includes(p)) label(p);
  }
  return out;
}

function place(s: MapState, W: number, H: number) {
  const { k, x: tx, y: ty } = s.t;
  const dpr = s.dpr;
  // Visible part of the map in unzoomed coordinates, to skip what is off screen.
  const m = 20 / k;
  const x0 = -tx / k - m, y0 = -ty / k - m, x1 = (s.width - tx) / k + m, y1 = (s.height - ty) / k + m;
  const sk = dpr * k, sx0 = dpr * tx, sy0 = dpr * ty;
  const sel = s.selected ? s.pilots.get(s.selected) ?? null : null;
  // Which pilots are in view, where on the screen; at low zoom, how many per cell.
  const clustering = k < CLUSTER_K;
  const C = CLUSTER_PX * dpr;
  const cols = Math.ceil(W / C) + 2, rows = Math.ceil(H / C) + 2;
  const cells = s.cells;
  if (clustering) {
    if (cells.n.length < cols * rows) { cells.n = new Int32Array(cols * rows); cells.x = new Float64Array(cols * rows); cells.y = new Float64Array(cols * rows); }
    cells.n.fill(0, 0, cols * rows); cells.x.fill(0, 0, cols * rows); cells.y.fill(0, 0, cols * rows);
  }
  const cellN = cells.n, cellX = cells.x, cellY = cells.y;
  const cellOf = (p: Pilot) => (Math.floor(p.sy / C) + 1) * cols + Math.floor(p.sx / C) + 1;
  for (const p of s.pilots.values()) {
    if (!p.shown || !p.placed || p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1) { p.drawn = NOT_DRAWN; continue; }
    p.sx = sx0 + sk * p.x; p.sy = sy0 + sk * p.y;
    p.drawn = p.cls;
    if (clustering && p !== sel) {
      const c = cellOf(p);
      cellN[c]++; cellX[c] += p.sx; cellY[c] += p.sy;
    }
  }
  s.bubbles = [];
  if (!clustering) return;
  // Neighbouring cells whose pilots' mean positions are closer than half a cell are one
  // cluster (a group on a cell's edge is not cut in two): union-find over the cells.
  const n = cols * rows;
  if (cells.parent.length < n) cells.parent = new Int32Array(n);
  const cellP = cells.parent;
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
  for (const p of s.pilots.values()) {
    if (p.drawn !== NOT_DRAWN && p !== sel && cellN[root(cellOf(p))] >= CLUSTER_MIN) p.drawn = CLUSTERED;
  }
  for (let c = 0; c < n; c++) {
    const cn = cellN[c];
    if (cn >= CLUSTER_MIN && root(c) === c) s.bubbles.push({ x: cellX[c] / cn / dpr, y: cellY[c] / cn / dpr, r: bubbleRadius(cn), n: cn });
  }
}
