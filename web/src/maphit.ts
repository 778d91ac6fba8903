// What is under a pixel of the map: the nearest shown pilot (a grid over their projected
// positions, not a scan of every pilot) or a count bubble of the last frame. Pure: it
// reads and caches in the map's state (mapstate.ts).

import { CLUSTERED, type Bubble, type MapState, type Pilot } from './mapstate';

/** Hit-test grid cell, in unzoomed projection pixels. */
const CELL = 8;
/** Hover radius in screen pixels. */
const HIT_PX = 10;

function buildGrid(s: MapState) {
  s.grid = new Map();
  for (const p of s.pilots.values()) {
    if (!p.shown || !isFinite(p.x)) continue;
    const k = Math.floor(p.y / CELL) * 65536 + Math.floor(p.x / CELL);
    const cell = s.grid.get(k);
    if (cell) cell.push(p); else s.grid.set(k, [p]);
  }
  s.gridDirty = false;
}

/** The shown pilot nearest to a canvas CSS pixel, within HIT_PX (not one inside a bubble). */
export function hit(s: MapState, mx: number, my: number): Pilot | null {
  if (s.gridDirty) buildGrid(s);
  const t = s.t;
  const bx = (mx - t.x) / t.k, by = (my - t.y) / t.k;
  const r = HIT_PX / t.k;
  let best: Pilot | null = null;
  let bestD = r * r;
  for (let cy = Math.floor((by - r) / CELL); cy <= Math.floor((by + r) / CELL); cy++) {
    for (let cx = Math.floor((bx - r) / CELL); cx <= Math.floor((bx + r) / CELL); cx++) {
      const cell = s.grid.get(cy * 65536 + cx);
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

/** The bubble under a canvas CSS pixel, if any (the nearest when they overlap). */
export function bubbleAt(s: MapState, mx: number, my: number): Bubble | null {
  let best: Bubble | null = null, bestD = Infinity;
  for (const q of s.bubbles) {
    const d = (q.x - mx) ** 2 + (q.y - my) ** 2;
    if (d <= (q.r + 2) ** 2 && d < bestD) { bestD = d; best = q; }
  }
  return best;
}
