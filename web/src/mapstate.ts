// The live map's state, in one typed object (`state`), and the pure changes to it: the
// pilots' table as the stream's snapshot and updates change it (each pilot projected,
// with its trail), the filter, and the projection between longitude/latitude, the
// unzoomed map and the screen. Nothing here touches the page; mapstream.ts feeds it,
// mapdraw.ts and maphit.ts read it, map.ts ties them to the page.

import { geoNaturalEarth1, type GeoPermissibleObjects, type GeoProjection } from 'd3-geo';
import { zoomIdentity, type ZoomTransform } from 'd3-zoom';
import { classIndex, type Sprite } from './symbols';
import { placed } from './geo';
import * as mv from './mapview';
import type { components } from './api.gen';

type Schemas = components['schemas'];
/** A pilot as /api/pilots and the stream's `joined` and `changed` carry it. */
export type ApiPilot = Schemas['Pilot'];
export type ChatLine = Schemas['ChatLine'];
export type Snapshot = Schemas['PilotsBody'];
/** A `moved` entry: callsign, lat, lon, alt_ft, heading, ground_speed_kt (the document says only "array"). */
export type Moved = [string, number, number, number, number, number];
export type Update = Omit<Schemas['Update'], 'moved'> & { moved?: Moved[] };
export type FlightEntry = Schemas['FlightEntry'];

/** Trail: one point every TRAIL_STEP seconds, at most TRAIL_POINTS (5 minutes). */
export const TRAIL_POINTS = 30;
export const TRAIL_STEP = 10;
export const TRAIL_SECONDS = TRAIL_POINTS * TRAIL_STEP;
/** What a pilot's `drawn` says besides a class index: not drawn, or inside a count bubble. */
export const NOT_DRAWN = -1;
export const CLUSTERED = -2;
/** The deepest zoom: a few kilometres across. */
export const MAX_K = 8192;
/** From this zoom the 1:50m land is drawn. */
export const FINE_K = 6;

export interface Pilot {
  callsign: string; model: string; aircraft: string; key: string;
  /** Class index into CLASSES, and the latest full pilot object (joined or changed). */
  cls: number; info: ApiPilot;
  /** Last frame: device-pixel screen position, and what was drawn (a class index, CLUSTERED or NOT_DRAWN). */
  sx: number; sy: number; drawn: number;
  lat: number; lon: number; alt_ft: number; heading: number; ground_speed_kt: number;
  /** Somewhere yet (geo.ts `placed`): a client still loading its scenery is not drawn and leaves no trail. */
  placed: boolean;
  local: boolean; relay: string | null; online_since: number;
  /** Projected position (unzoomed canvas CSS pixels) and the screen angle of its heading. */
  x: number; y: number; a: number;
  /** Trail ring: lon/lat, projected x/y, and time of each point. */
  tll: Float32Array; txy: Float32Array; tt: Uint32Array; tn: number; th: number;
  shown: boolean;
}

/** A count bubble of the last frame: centre and radius in CSS pixels of the map, and its pilots. */
export interface Bubble { x: number; y: number; r: number; n: number }

/** A callsign label of the last frame: its pilot and its box in CSS pixels of the map (the text starts 2 pixels in). */
export interface Label { p: Pilot; box: [number, number, number, number] }

/** The timing figures of the stream, for tests and the benchmark. */
export interface Split { parse: number; apply: number; draw: number }

/** Everything the map keeps between events and frames. */
export interface MapState {
  /** The pilots by callsign; how many pass the filter; how many are online; the last event's generated_at. */
  pilots: Map<string, Pilot>;
  shownCount: number;
  online: number;
  latest: number;
  /** The pilot filter, trimmed and lower-cased ('' shows all). */
  filter: string;

  /** The map's size (CSS pixels) and device pixel ratio; the projection fitted to it; the zoom. */
  width: number;
  height: number;
  dpr: number;
  projection: GeoProjection;
  t: ZoomTransform;

  /** The world: land at 1:110m, and 1:50m once zoomed in to FINE_K (asked once). */
  land: GeoPermissibleObjects | null;
  land50: GeoPermissibleObjects | null;
  land50Asked: boolean;
  /** The base canvas's paths in unzoomed coordinates, rebuilt when the size changes. */
  paths: { sphere: Path2D | null; graticule: Path2D | null; land: Path2D | null; land50: Path2D | null };
  /** The base canvas needs drawing again; how long its last drawing took. */
  baseDirty: boolean;
  baseMs: number;

  /** The canvases' contexts (null until the page is set up). */
  ctx: CanvasRenderingContext2D | null;
  octx: CanvasRenderingContext2D | null;
  /** The overlay's pixel buffer and the sprites (built for `spriteDpr`). */
  pixels: ImageData | null;
  buf32: Uint32Array | null;
  sprites: Sprite[][];
  spriteDpr: number;
  /** Clustering, reused between frames: per screen cell the count, union-find parent and sum of positions. */
  cells: { n: Int32Array; parent: Int32Array; x: Float64Array; y: Float64Array };
  /** The count bubbles of the last frame, and their drawn images by label and pixel ratio. */
  bubbles: Bubble[];
  /** The callsign labels of the last frame (at regional zoom and closer), none overlapping another or a symbol. */
  labels: Label[];
  bubbleImages: Map<string, HTMLCanvasElement>;
  /** The pending animation frame (0: none). */
  frame: number;

  /** Hit testing: the shown pilots by grid cell of projected position, rebuilt when dirty. */
  grid: Map<number, Pilot[]>;
  gridDirty: boolean;
  /** The mouse (canvas CSS pixels) and what is under it. */
  mouse: [number, number] | null;
  hovered: Pilot | null;
  hoveredBubble: Bubble | null;

  /** The selected callsign, what /api/pilots said of it, its chat lines (oldest first), flight log and tracks. */
  selected: string | null;
  selectedExtra: ApiPilot | null;
  selectedChat: ChatLine[];
  selectedFlights: FlightEntry[] | null;
  /** Tracks drawn for the selected callsign: lon/lat per point, one array per flight. */
  selectedTracks: Float32Array[];
  /** The map is being moved to follow the selected pilot (not by a drag). */
  following: boolean;

  /** The map's view as the URL holds it (centre and zoom are read from `t`), and one waiting for a size. */
  view: mv.MapView;
  pendingView: mv.MapView | null;
  /** The timer that writes the view into the URL. */
  urlTimer: number;
  /** Whether the map's tab shows. */
  visible: () => boolean;

  /** The pilot stream, and its figures: apply times (the last 600), their split, characters and events read. */
  stream: {
    source: EventSource | null;
    applyMs: number[];
    lastApplyMs: number;
    lastSplit: Split;
    splits: Split[];
    chars: number;
    events: number;
    snapshots: number;
    /** The open panel's refresh after the last update (not in applyMs). */
    panelMs: number;
  };
}

/** A map with no pilots, no size and the whole world in view. */
export function newState(): MapState {
  return {
    pilots: new Map(), shownCount: 0, online: 0, latest: 0, filter: '',
    width: 0, height: 0, dpr: 1, projection: geoNaturalEarth1(), t: zoomIdentity,
    land: null, land50: null, land50Asked: false,
    paths: { sphere: null, graticule: null, land: null, land50: null },
    baseDirty: true, baseMs: 0,
    ctx: null, octx: null, pixels: null, buf32: null, sprites: [], spriteDpr: 0,
    cells: { n: new Int32Array(0), parent: new Int32Array(0), x: new Float64Array(0), y: new Float64Array(0) },
    bubbles: [], labels: [], bubbleImages: new Map(), frame: 0,
    grid: new Map(), gridDirty: true, mouse: null, hovered: null, hoveredBubble: null,
    selected: null, selectedExtra: null, selectedChat: [], selectedFlights: null, selectedTracks: [], following: false,
    view: mv.defaults(), pendingView: null, urlTimer: 0, visible: () => true,
    stream: {
      source: null, applyMs: [], lastApplyMs: 0, lastSplit: { parse: 0, apply: 0, draw: 0 }, splits: [],
      chars: 0, events: 0, snapshots: 0, panelMs: 0,
    },
  };
}

/** The page's map. */
export const state: MapState = newState();

/** Longitude/latitude to unzoomed map pixels (NaN off the projection). */
export function project(s: MapState, lon: number, lat: number): [number, number] {
  const p = s.projection([lon, lat]);
  return p ? [p[0], p[1]] : [NaN, NaN];
}

/** Longitude/latitude to the map's CSS pixels at the current zoom. */
export function toScreen(s: MapState, lon: number, lat: number): [number, number] {
  const p = project(s, lon, lat);
  return [s.t.x + s.t.k * p[0], s.t.y + s.t.k * p[1]];
}

/** The latitude and longitude under a CSS pixel of the map (null off the globe's projection). */
export function fromScreen(s: MapState, x: number, y: number): [number, number] | null {
  const ll = s.projection.invert?.([(x - s.t.x) / s.t.k, (y - s.t.y) / s.t.k]);
  return ll && isFinite(ll[0]) && isFinite(ll[1]) ? [ll[1], ll[0]] : null;
}

/** The map's centre, latitude and longitude. */
export function centre(s: MapState): [number, number] | null {
  return fromScreen(s, s.width / 2, s.height / 2);
}

/** Is (lat, lon) on the screen now? */
export function inView(s: MapState, lat: number, lon: number): boolean {
  const [x, y] = toScreen(s, lon, lat);
  return x >= 0 && y >= 0 && x <= s.width && y <= s.height;
}

/** The map's visible area as west, south, east, north boxes (the whole world when most of it shows). */
export function viewBoxes(s: MapState): number[][] {
  const t = s.t;
  if (t.k < 2.5) return [[-180, -90, 180, 90]];
  let w = 180, so = 90, e = -180, n = -90, ok = 0;
  for (let i = 0; i <= 4; i++) {
    for (let j = 0; j <= 4; j++) {
      const ux = ((i / 4) * s.width - t.x) / t.k, uy = ((j / 4) * s.height - t.y) / t.k;
      const ll = s.projection.invert?.([ux, uy]);
      if (!ll || !isFinite(ll[0]) || !isFinite(ll[1])) continue;
      const back = project(s, ll[0], ll[1]);
      if (Math.abs(back[0] - ux) > 0.5 || Math.abs(back[1] - uy) > 0.5) continue; // off the globe
      w = Math.min(w, ll[0]); e = Math.max(e, ll[0]); so = Math.min(so, ll[1]); n = Math.max(n, ll[1]); ok++;
    }
  }
  if (ok < 2) return [];
  const mx = (e - w) * 0.1 + 0.01, my = (n - so) * 0.1 + 0.01;
  return [[Math.max(-180, w - mx), Math.max(-90, so - my), Math.min(180, e + mx), Math.min(90, n + my)]];
}

function headingAngle(s: MapState, p: Pilot): number {
  // Screen angle of true north turned by the heading: project a point a little along it.
  const r = (p.heading * Math.PI) / 180;
  const d = 0.05;
  const c = Math.max(0.05, Math.cos((p.lat * Math.PI) / 180));
  const q = project(s, p.lon + (Math.sin(r) * d) / c, Math.max(-89.9, Math.min(89.9, p.lat + Math.cos(r) * d)));
  const dx = q[0] - p.x, dy = q[1] - p.y;
  if (!isFinite(dx) || !isFinite(dy) || (dx === 0 && dy === 0)) return r;
  return Math.atan2(dx, -dy);
}

/** Does the pilot pass the filter? */
function matches(s: MapState, p: Pilot): boolean {
  return s.filter === '' || p.key.includes(s.filter);
}

/** Projects the pilot's position and heading (nowhere, NaN, until it is placed). */
function place(s: MapState, p: Pilot) {
  const was = p.placed;
  p.placed = placed(p.alt_ft);
  // Placed at last: what came before (the airport's reference point, a jump to the
  // start position) is no part of its trail.
  if (p.placed && !was) { p.tn = 0; p.th = 0; }
  const xy = p.placed ? project(s, p.lon, p.lat) : [NaN, NaN];
  p.x = xy[0]; p.y = xy[1];
  p.a = headingAngle(s, p);
}

/** The trail's point `i` (0 the oldest kept) as an index into its ring. */
export function trailIndex(p: Pilot, i: number): number {
  return (p.th + TRAIL_POINTS - p.tn + i) % TRAIL_POINTS;
}

function pushTrail(p: Pilot, now: number) {
  if (!p.placed) return;
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

function add(s: MapState, a: ApiPilot, now: number) {
  const p: Pilot = {
    callsign: a.callsign, model: a.model ?? '', aircraft: a.aircraft ?? '',
    key: keyOf(a), cls: classIndex(a.class), info: a, sx: 0, sy: 0, drawn: NOT_DRAWN,
    lat: a.lat, lon: a.lon, alt_ft: a.alt_ft, heading: a.heading, ground_speed_kt: a.ground_speed_kt,
    placed: false, local: a.local, relay: a.relay ?? null, online_since: a.online_since,
    x: 0, y: 0, a: 0,
    tll: new Float32Array(2 * TRAIL_POINTS), txy: new Float32Array(2 * TRAIL_POINTS), tt: new Uint32Array(TRAIL_POINTS), tn: 0, th: 0,
    shown: false,
  };
  place(s, p);
  pushTrail(p, now);
  p.shown = matches(s, p);
  const old = s.pilots.get(p.callsign);
  if (old?.shown) s.shownCount--;
  s.pilots.set(p.callsign, p);
  if (p.shown) s.shownCount++;
}

function remove(s: MapState, cs: string) {
  const p = s.pilots.get(cs);
  if (!p) return;
  if (p.shown) s.shownCount--;
  s.pilots.delete(cs);
  if (s.hovered === p) s.hovered = null;
}

/** The stream's `snapshot`: every pilot anew. */
export function applySnapshot(s: MapState, snap: Snapshot) {
  s.pilots.clear();
  s.shownCount = 0;
  s.hovered = null;
  s.latest = snap.generated_at;
  s.online = snap.online;
  for (const a of snap.pilots) add(s, a, snap.generated_at);
  s.gridDirty = true;
}

/** The stream's `update`: who left, joined, moved (a trail point every TRAIL_STEP seconds) and changed. */
export function applyUpdate(s: MapState, u: Update) {
  s.latest = u.generated_at;
  s.online = u.online;
  if (u.left) for (const cs of u.left) remove(s, cs);
  if (u.joined) for (const a of u.joined) add(s, a, u.generated_at);
  if (u.moved) {
    for (const m of u.moved) {
      const p = s.pilots.get(m[0]);
      if (!p) continue;
      p.lat = m[1]; p.lon = m[2]; p.alt_ft = m[3]; p.heading = m[4]; p.ground_speed_kt = m[5];
      place(s, p);
      pushTrail(p, u.generated_at);
    }
  }
  if (u.changed) {
    for (const c of u.changed) {
      const p = s.pilots.get(c.callsign);
      if (!p) continue;
      // Chat, rate and lag are kept from `joined`, as the page always did (docs/API.md now
      // sends whole pilots in `changed`; nothing reads these three from here: the details
      // take them from /api/pilots and the chat stream).
      p.info = { ...p.info, ...c, chat: p.info.chat, rate_hz: p.info.rate_hz, lag_s: p.info.lag_s };
      p.cls = classIndex(p.info.class);
      p.key = keyOf(p.info);
      const shown = matches(s, p);
      if (shown !== p.shown) { s.shownCount += shown ? 1 : -1; p.shown = shown; }
    }
  }
  s.gridDirty = true;
}

/** Sets the filter (a callsign, aircraft or model substring) and who passes it. */
export function setFilter(s: MapState, text: string) {
  s.filter = text.trim().toLowerCase();
  s.shownCount = 0;
  for (const p of s.pilots.values()) {
    p.shown = matches(s, p);
    if (p.shown) s.shownCount++;
  }
  s.gridDirty = true;
}

/** Every pilot and trail point projected again (the projection was fitted to a new size). */
export function reproject(s: MapState) {
  for (const p of s.pilots.values()) {
    place(s, p);
    for (let i = 0; i < p.tn; i++) {
      const j = trailIndex(p, i);
      const xy = project(s, p.tll[2 * j], p.tll[2 * j + 1]);
      p.txy[2 * j] = xy[0]; p.txy[2 * j + 1] = xy[1];
    }
  }
  s.gridDirty = true;
}
