// The live map: world outlines drawn with d3-geo on a canvas, every pilot its class's
// symbol (symbols.ts) turned to its heading with a short trail, dense areas clustered
// into count bubbles at low zoom, airports (airports.ts) when zoomed in; fed by
// /api/pilots/stream. Its view (centre, zoom, selection, panel, filters) lives in the
// URL (mapview.ts).
//
// This module ties the parts to the page: the state (mapstate.ts), the stream
// (mapstream.ts), drawing (maplayout.ts, mapdraw.ts), hit testing (maphit.ts) and the
// selected pilot's details (mapdetails.ts); the zoom, the selection and the URL.

import { select } from 'd3-selection';
import { zoom, zoomIdentity, type ZoomTransform } from 'd3-zoom';
import { feature } from 'topojson-client';
import type { Topology } from 'topojson-specification';
import { $, h, int, getJson } from './util';
import { CLASSES, type Class } from './symbols';
import { airportsWanted, initAirports } from './airports';
import * as mv from './mapview';
import type { components } from './api.gen';
import {
  state, MAX_K, NOT_DRAWN, CLUSTERED, project, toScreen, centre as centreOf, inView, viewBoxes,
  setFilter, reproject, type Bubble, type ChatLine, type Pilot,
} from './mapstate';
import { hit, bubbleAt } from './maphit';
import { SPHERE, buildPaths, draw as drawMap, scheduleDraw as scheduleMapDraw } from './mapdraw';
import { connect } from './mapstream';
import { showDetails as showMapDetails } from './mapdetails';

export type { Pilot } from './mapstate';

type Schemas = components['schemas'];

/** The page's map state (one object: mapstate.ts). */
const s = state;
/** Tracks drawn at most this many flights back (today's). */
const MAX_TRACKS = 10;

const canvas = () => $('map') as HTMLCanvasElement;
const zoomer = zoom<HTMLCanvasElement, unknown>().scaleExtent([1, MAX_K]);

/** The map's view as the URL holds it (centre and zoom are read from the zoom transform). */
export const view: mv.MapView = s.view;
/** What the panels (panels.ts) listen to. */
export const listeners = {
  update: [] as (() => void)[],
  /** A snapshot arrived (the stream connected or reconnected). */
  snapshot: [] as (() => void)[],
  chat: [] as ((lines: ChatLine[]) => void)[],
  view: [] as (() => void)[],
};

const draw = () => drawMap(s);
const scheduleDraw = () => scheduleMapDraw(s);
const showDetails = () => showMapDetails(s);
const centre = () => centreOf(s);

function resize() {
  const wrap = $('map-wrap');
  const w = wrap.clientWidth, hh = wrap.clientHeight;
  if (w === 0 || hh === 0) return;
  if (w === s.width && hh === s.height && s.dpr === (window.devicePixelRatio || 1)) return;
  // Keep the same centre and zoom when the map changes size (a panel opens, a phone turns).
  const was = s.width > 0 && s.t.k > 1 ? centre() : null;
  s.width = w; s.height = hh; s.dpr = window.devicePixelRatio || 1;
  const c = canvas();
  c.width = Math.round(w * s.dpr); c.height = Math.round(hh * s.dpr);
  if (s.octx) {
    const o = s.octx.canvas;
    o.width = c.width; o.height = c.height;
  }
  s.baseDirty = true;
  s.projection.fitExtent([[4, 4], [w - 4, hh - 4]], SPHERE);
  zoomer.extent([[0, 0], [w, hh]]).translateExtent([[0, 0], [w, hh]]);
  buildPaths(s);
  reproject(s);
  // Keep the zoom inside the new extent (or take the one a link asked for).
  if (!s.pendingView && was) { s.pendingView = { ...mv.defaults(), centre: was, zoom: s.t.k }; }
  if (s.pendingView) applyPendingView(); else select(c).call(zoomer.transform, s.t);
  draw();
}

/** Zooms in on a bubble: its pilots come apart. */
function zoomInto(q: Bubble) {
  const k = Math.min(MAX_K, Math.max(s.t.k * 4, 4));
  const ux = (q.x - s.t.x) / s.t.k, uy = (q.y - s.t.y) / s.t.k;
  select(canvas()).call(zoomer.transform, zoomIdentity.translate(s.width / 2 - k * ux, s.height / 2 - k * uy).scale(k));
}

function showCount() {
  $('pilot-count').textContent = `${int(s.shownCount)} shown / ${int(s.online)} online`;
}

function showTooltip() {
  const tip = $('tooltip');
  let sx: number, sy: number;
  if (s.hoveredBubble) {
    const q = s.hoveredBubble;
    tip.replaceChildren(h('b', {}, `${int(q.n)} pilots`), '\n', 'click to zoom in');
    sx = q.x; sy = q.y;
  } else if (s.hovered && s.hovered.shown) {
    const p = s.hovered;
    tip.replaceChildren(
      h('b', {}, p.callsign), '\n',
      p.info.aircraft_name || p.aircraft || p.model || 'unknown aircraft', '\n',
      `${int(p.alt_ft)} ft · ${int(p.ground_speed_kt)} kt`,
    );
    sx = s.t.x + s.t.k * p.x; sy = s.t.y + s.t.k * p.y;
  } else { tip.hidden = true; return; }
  tip.hidden = false;
  const tw = tip.offsetWidth, th = tip.offsetHeight;
  let left = sx + 14, top = sy + 14;
  if (left + tw > s.width) left = sx - 14 - tw;
  if (top + th > s.height) top = sy - 14 - th;
  tip.style.left = `${Math.max(0, left)}px`;
  tip.style.top = `${Math.max(0, top)}px`;
}

function rehover() {
  const m = s.mouse;
  s.hoveredBubble = m ? bubbleAt(s, m[0], m[1]) : null;
  s.hovered = m && !s.hoveredBubble ? hit(s, m[0], m[1]) : null;
  showTooltip();
}

/** Selects a pilot (null: none): its details, chat lines and flight log. */
export async function select_(cs: string | null, follow = false) {
  if (cs !== s.selected) {
    s.selectedExtra = null;
    s.selectedFlights = null;
    s.selectedTracks = [];
    s.selectedChat = [];
  }
  s.selected = cs;
  view.sel = cs;
  view.follow = cs !== null && follow;
  showDetails();
  scheduleDraw();
  viewChanged();
  if (!cs) return;
  if (view.follow) followSelected();
  const [r, chat] = await Promise.all([
    getJson<Schemas['PilotsBody']>(`/api/pilots?callsign=${encodeURIComponent(cs)}`),
    getJson<Schemas['ChatBody']>(`/api/chat?callsign=${encodeURIComponent(cs)}&limit=100`),
  ]);
  if (s.selected !== cs) return;
  s.selectedExtra = r.body?.pilots?.find((q) => q.callsign === cs) ?? null;
  const ids = new Set(s.selectedChat.map((l) => l.id));
  s.selectedChat = [...(chat.body?.lines ?? []).filter((l) => !ids.has(l.id)), ...s.selectedChat].sort((a, b) => a.id - b.id);
  showDetails();
  await loadLog(cs);
}

/** Centres the map on the selected pilot, at the same zoom. */
function followSelected() {
  const p = s.selected ? s.pilots.get(s.selected) : null;
  if (!p || !isFinite(p.x) || s.width === 0) return;
  s.following = true;
  select(canvas()).call(zoomer.translateTo, p.x, p.y);
  s.following = false;
}

/** Centres the map on a point, zoomed in to at least `minK`. */
export function centreOn(lat: number, lon: number, minK = 1) {
  setView(lat, lon, Math.max(s.t.k, minK));
}

/** Centres the map on a point at zoom `k`. */
function setView(lat: number, lon: number, k: number) {
  const [x, y] = project(s, lon, lat);
  if (!isFinite(x) || s.width === 0) return;
  const z = Math.min(MAX_K, Math.max(1, k));
  select(canvas()).call(zoomer.transform, zoomIdentity.translate(s.width / 2 - z * x, s.height / 2 - z * y).scale(z));
}

/** A flight's track as lon/lat pairs. */
function trackOf(body: Schemas['FlightBody'] | null): Float32Array {
  const c = body?.track.geometry.coordinates ?? [];
  const ll = new Float32Array(2 * c.length);
  c.forEach(([lon, lat], i) => { ll[2 * i] = lon; ll[2 * i + 1] = lat; });
  return ll;
}

/** One flight's track, alone on the map. */
async function showFlight(id: number) {
  const cs = s.selected;
  const r = await getJson<Schemas['FlightBody']>(`/api/flights/${id}`);
  if (s.selected !== cs || !r.body) return;
  s.selectedTracks = [trackOf(r.body)];
  scheduleDraw();
}

/** The callsign's recent flights from the flight log, and today's tracks on the map. */
async function loadLog(cs: string) {
  const r = await getJson<Schemas['FlightsBody']>(`/api/flights?callsign=${encodeURIComponent(cs)}&limit=20`);
  if (s.selected !== cs || !r.body?.flights) return; // no flight log in this process: nothing shown
  const body = r.body;
  s.selectedFlights = body.flights;
  showDetails();
  const midnight = Math.floor(body.generated_at / 86400) * 86400;
  const today = body.flights.filter((f) => (f.end ?? body.generated_at) >= midnight).slice(0, MAX_TRACKS);
  const tracks: Float32Array[] = [];
  for (const f of today) {
    const t = await getJson<Schemas['FlightBody']>(`/api/flights/${f.id}`);
    if (s.selected !== cs) return;
    tracks.push(trackOf(t.body));
  }
  s.selectedTracks = tracks;
  scheduleDraw();
}

// The view in the URL: written (replacing the history entry) a moment after it changes.
function viewChanged() {
  for (const f of listeners.view) f();
  window.clearTimeout(s.urlTimer);
  s.urlTimer = window.setTimeout(remember, 250);
}

/** Writes the view into the URL while the map shows. */
export function remember() {
  window.clearTimeout(s.urlTimer);
  if (!s.visible()) return;
  view.centre = centre();
  view.zoom = s.t.k;
  const q = mv.format(view, wide());
  const want = `#map${q ? `?${q}` : ''}`;
  if (location.hash !== want && !(want === '#map' && location.hash === '')) history.replaceState(history.state, '', want);
}

/** The hash's query after `#map`: a link sets the view from it; the bare `#map` (the tab) keeps the view. */
export function mapFromHash(query: string | null) {
  if (query === null) { remember(); return; }
  const v = mv.parse(query, wide());
  const { centre: _c, zoom: _z, ...rest } = v;
  Object.assign(view, rest);
  ($('pilot-filter') as HTMLInputElement).value = view.q;
  setFilter(s, view.q);
  showCount();
  if (v.sel !== s.selected || v.follow) void select_(v.sel, v.follow);
  s.pendingView = v;
  applyPendingView();
  for (const f of listeners.view) f();
}

function applyPendingView() {
  const v = s.pendingView;
  if (!v || s.width === 0) return;
  s.pendingView = null;
  if (v.centre && v.zoom > 1) setView(v.centre[0], v.centre[1], v.zoom);
  else select(canvas()).call(zoomer.transform, zoomIdentity);
}

/** A window wide enough for the pilot list beside the map (open unless the link says otherwise). */
function wide(): boolean {
  return window.innerWidth >= mv.WIDE_PX;
}

export function initMap(isVisible: () => boolean) {
  s.visible = isVisible;
  view.panel = mv.defaults(wide()).panel;
  const c = canvas();
  s.ctx = c.getContext('2d', { alpha: false })!;
  s.octx = ($('pilots') as HTMLCanvasElement).getContext('2d', { willReadFrequently: false })!;
  initAirports(() => { s.baseDirty = true; scheduleDraw(); });
  zoomer.on('zoom', (e: { transform: ZoomTransform; sourceEvent: Event | null }) => {
    s.t = e.transform;
    // Dragging the map (not following, not a link) stops following.
    if (e.sourceEvent && e.sourceEvent.type !== 'wheel' && view.follow && !s.following) { view.follow = false; if (s.selected) showDetails(); }
    s.baseDirty = true;
    scheduleDraw();
    if (s.mouse) rehover();
    airportsWanted(s.t.k, viewBoxes(s));
    viewChanged();
  });
  select(c).call(zoomer).on('dblclick.zoom', null);
  c.addEventListener('mousemove', (e) => {
    s.mouse = [e.offsetX, e.offsetY];
    rehover();
    scheduleDraw();
  });
  c.addEventListener('mouseleave', () => { s.mouse = null; s.hovered = null; s.hoveredBubble = null; showTooltip(); scheduleDraw(); });
  c.addEventListener('click', (e) => {
    const q = bubbleAt(s, e.offsetX, e.offsetY);
    if (q) { zoomInto(q); return; }
    const p = hit(s, e.offsetX, e.offsetY);
    void select_(p ? p.callsign : null);
  });
  $('details-close').addEventListener('click', () => void select_(null));
  $('details-follow').addEventListener('click', () => {
    view.follow = !view.follow && s.selected !== null;
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
    setFilter(s, input.value);
    showCount();
    rehover();
    draw();
    viewChanged();
    for (const f of listeners.update) f();
  });
  new ResizeObserver(() => resize()).observe($('map-wrap'));
  void fetch('/land.json').then((r) => r.json()).then((topo: Topology) => {
    s.land = feature(topo, topo.objects.land);
    buildPaths(s);
    draw();
  });
  airportsWanted(s.t.k, viewBoxes(s));
  connect(s, {
    redraw() { draw(); if (s.mouse) rehover(); },
    applied() {
      showCount();
      if (s.selected) showDetails();
      if (view.follow) followSelected();
    },
    panels() { for (const f of listeners.update) f(); },
    snapshot() { for (const f of listeners.snapshot) f(); },
    chat(lines) {
      if (s.selected) {
        const ids = new Set(s.selectedChat.map((l) => l.id));
        const mine = lines.filter((l) => l.callsign === s.selected && !ids.has(l.id));
        if (mine.length) { s.selectedChat.push(...mine); showDetails(); }
      }
      for (const f of listeners.chat) f(lines);
    },
  });
}

export function mapShown() {
  resize();
  draw();
}

/** What the panels read: the pilots, the map's centre and visible area. */
export const mapApi = {
  pilots: () => s.pilots.values(),
  get selected() { return s.selected; },
  centre,
  /** Is (lat, lon) on the screen now? */
  inView: (lat: number, lon: number): boolean => inView(s, lat, lon),
  className: (p: Pilot) => CLASSES[p.cls] as Class,
  changed: viewChanged,
};

/** What tests and the benchmark may read. */
export const mapHooks = {
  project: (lon: number, lat: number): [number, number] => toScreen(s, lon, lat),
  pilot(callsign: string) {
    const p = s.pilots.get(callsign);
    if (!p) return null;
    return {
      callsign: p.callsign, model: p.model, aircraft: p.aircraft, lat: p.lat, lon: p.lon,
      alt_ft: p.alt_ft, heading: p.heading, ground_speed_kt: p.ground_speed_kt, shown: p.shown, trail: p.tn,
      class: CLASSES[p.cls], aircraft_name: p.info.aircraft_name ?? null, frequency_mhz: p.info.frequency_mhz ?? null,
    };
  },
  /** What the last frame drew for a callsign: its class's symbol, `cluster` (inside a count bubble) or null (not drawn). */
  drawnClass(callsign: string): string | null {
    const p = s.pilots.get(callsign);
    if (!p || p.drawn === NOT_DRAWN) return null;
    return p.drawn === CLUSTERED ? 'cluster' : CLASSES[p.drawn];
  },
  /** The callsign labels of the last frame: callsign and box (left, top, right, bottom; CSS pixels of the map). */
  labels() { return s.labels.map((l) => ({ callsign: l.p.callsign, box: l.box.slice() })); },
  /** The count bubbles of the last frame (CSS pixels of the map). */
  clusters() { return s.bubbles.map((q) => ({ x: q.x, y: q.y, n: q.n })); },
  /** The map's view as the URL holds it, and the centre now. */
  mapView() { return { ...view, centre: centre(), zoom: s.t.k, selected: s.selected }; },
  counts() { return { shown: s.shownCount, online: s.online }; },
  /** The selected callsign's flight log as shown, and the track points drawn. */
  log() {
    return {
      flights: s.selectedFlights?.map((f) => ({ id: f.id, end: f.end, samples: f.samples })) ?? null,
      trackPoints: s.selectedTracks.map((t) => t.length / 2),
    };
  },
  get lastApplyMs() { return s.stream.lastApplyMs; },
  /** The last update's time split: JSON.parse, applying to the state, redrawing. */
  get lastSplitMs() { return { ...s.stream.lastSplit }; },
  /** Every update's split (the last 600), as applyMs. */
  get splitMs() { return s.stream.splits.slice(); },
  /** The open panel's refresh after the last update (not in applyMs). */
  get lastPanelMs() { return s.stream.panelMs; },
  /** The last redraw of the base canvas (land, airports), and whether the 1:50m land is in. */
  get lastBaseMs() { return s.baseMs; },
  get fineLand() { return s.paths.land50 !== null; },
  get applyMs() { return s.stream.applyMs.slice(); },
  get streamChars() { return s.stream.chars; },
  get streamEvents() { return s.stream.events; },
  get snapshots() { return s.stream.snapshots; },
  get zoom() { return { k: s.t.k, x: s.t.x, y: s.t.y }; },
};
