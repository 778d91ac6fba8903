// Airports on the map, from the table lobby embeds (GET /api/airports, OurAirports,
// public domain). Which kinds depend on the zoom: large airports over the whole world
// (one request), medium ones from zoom 6 in 10° tiles, small ones from zoom 48 in 2°
// tiles. Each tile is asked once (debounced while the view moves) and kept; the map
// draws them on its base canvas with their ICAO code, skipping labels that would
// overlap one already drawn.

import { getJson } from './util';
import { Boxes, LABEL_FONT, guessWidth } from './labels';
import type { components } from './api.gen';

type Airport = components['schemas']['Airport'];
type Answer = components['schemas']['AirportsBody'];

const MEDIUM_K = 6;
const SMALL_K = 48;
const LABEL_K = 3;
/** Tiles asked at most at once for one view; a view wider than that shows the coarser level. */
const MAX_TILES = 24;

let world: Airport[] | null = null;
const tiles = new Map<string, Airport[] | 'pending'>();
let redraw = () => {};
let timer = 0;
let requests = 0;
let drawn: { ident: string; kind: string; x: number; y: number; label: boolean }[] = [];

type Level = { name: 'medium' | 'small'; size: number };
function levelFor(k: number): Level | null {
  if (k >= SMALL_K) return { name: 'small', size: 2 };
  if (k >= MEDIUM_K) return { name: 'medium', size: 10 };
  return null;
}

/** The tiles of a level that cover a west/south/east/north box (no antimeridian crossing: the caller splits). */
function tileKeys(l: Level, [w, s, e, n]: number[]): string[] {
  const keys: string[] = [];
  for (let ty = Math.floor((s + 90) / l.size); ty <= Math.floor((Math.min(n, 89.999) + 90) / l.size); ty++) {
    for (let tx = Math.floor((w + 180) / l.size); tx <= Math.floor((Math.min(e, 179.999) + 180) / l.size); tx++) {
      keys.push(`${l.name}/${l.size}/${tx}/${ty}`);
    }
  }
  return keys;
}

async function fetchTile(key: string) {
  const [name, size, tx, ty] = key.split('/');
  const z = Number(size), w = Number(tx) * z - 180, s = Number(ty) * z - 90;
  tiles.set(key, 'pending');
  requests++;
  const r = await getJson<Answer>(`/api/airports?bbox=${w},${s},${w + z},${s + z}&min=${name}&limit=5000`);
  if (r.body?.airports) { tiles.set(key, r.body.airports); redraw(); } else tiles.delete(key);
}

async function fetchWorld() {
  world = [];
  requests++;
  const r = await getJson<Answer>('/api/airports?min=large&limit=5000');
  if (r.body?.airports) { world = r.body.airports; redraw(); } else world = null;
}

let want: { k: number; boxes: number[][] } = { k: 1, boxes: [] };

/** The map shows `boxes` (west, south, east, north; split at the antimeridian) at zoom `k`: ask for what is missing, soon. */
export function airportsWanted(k: number, boxes: number[][]) {
  want = { k, boxes };
  window.clearTimeout(timer);
  timer = window.setTimeout(load, 200);
}

/** The tiles of the view: its zoom's level, or the coarser one when that needs too many. */
function visibleKeys(): string[] {
  for (let l = levelFor(want.k); l; l = l.name === 'small' ? { name: 'medium', size: 10 } : null) {
    const keys = want.boxes.flatMap((b) => tileKeys(l!, b));
    if (keys.length <= MAX_TILES) return keys;
  }
  return [];
}

function load() {
  if (world === null) void fetchWorld();
  for (const key of visibleKeys()) if (!tiles.has(key)) void fetchTile(key);
}

export function initAirports(onData: () => void) {
  redraw = onData;
}

/**
 * Draws the airports of the current view on `ctx` (a transform of device pixels per CSS
 * pixel), each at `at(lon, lat)` in CSS pixels of a `width` × `height` map.
 */
export function drawAirports(ctx: CanvasRenderingContext2D, dpr: number, k: number, at: (lon: number, lat: number) => [number, number], width: number, height: number) {
  drawn = [];
  const lists: Airport[][] = [];
  if (world) lists.push(world);
  for (const key of visibleKeys()) { const t = tiles.get(key); if (t && t !== 'pending') lists.push(t); }
  if (!lists.length) return;
  const seen = new Set<string>();
  const labels = k >= LABEL_K;
  // Labels drawn so far, so a new one that would overlap is skipped.
  const taken = new Boxes();
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.font = LABEL_FONT;
  ctx.textBaseline = 'middle';
  ctx.lineWidth = 1.2;
  // Smaller and fainter when the whole world shows, so the pilots stand out.
  const zs = Math.min(1, 0.35 + k / 6);
  ctx.globalAlpha = k < LABEL_K ? 0.5 : 1;
  // One path per kind (a fill and a stroke each), then the labels.
  const dots = { large: new Path2D(), medium: new Path2D(), small: new Path2D() };
  const text: [string, number, number, string][] = [];
  for (const list of lists) {
    for (const a of list) {
      if (seen.has(a.ident)) continue;
      seen.add(a.ident);
      const [x, y] = at(a.lon, a.lat);
      if (!(x >= -20 && y >= -20 && x <= width + 20 && y <= height + 20)) continue;
      const kind = a.kind === 'large' ? 'large' : a.kind === 'medium' ? 'medium' : 'small';
      const r = (kind === 'large' ? 3.5 : kind === 'medium' ? 2.6 : 1.8) * zs;
      dots[kind].moveTo(x + r, y);
      dots[kind].arc(x, y, r, 0, 2 * Math.PI);
      let label = false;
      if (labels) {
        // About 6.6 pixels a character in the 11-pixel font; the marker's box too.
        if (taken.claim([x - r - 1, y - 7, x + r + 4 + guessWidth(a.ident), y + 7])) {
          text.push([a.ident, x + r + 3, y, kind]);
          label = true;
        }
      }
      drawn.push({ ident: a.ident, kind: a.kind, x, y, label });
    }
  }
  const stroke = { large: '#a9c6e8', medium: '#8fb0d4', small: '#7290b0' };
  const fill = { large: '#d8e6f5', medium: '#b7c9dc', small: '#95a9be' };
  for (const kind of ['small', 'medium', 'large'] as const) {
    ctx.fillStyle = '#0f1720';
    ctx.fill(dots[kind]);
    ctx.strokeStyle = stroke[kind];
    ctx.stroke(dots[kind]);
  }
  ctx.globalAlpha = 1;
  for (const [ident, x, y, kind] of text) {
    ctx.fillStyle = fill[kind as keyof typeof fill];
    ctx.fillText(ident, x, y);
  }
}

export const airportHooks = {
  /** The airports drawn in the last frame: ident, kind, screen position, whether labelled. */
  airports() { return drawn.slice(); },
  get airportRequests() { return requests; },
};
