// The map's view in the URL, as the server browser keeps its own (serverview.ts): after
// the tab's name, `#map?c=64.0,-22.6&z=40&sel=BIKF_TW&panel=chat&area=1`, only what
// differs from the defaults, in a fixed order. A link opens the same view.

export const PANELS = ['pilots', 'chat', 'atc', 'leaders'] as const;
export type Panel = (typeof PANELS)[number] | null;
export const SORTS = ['callsign', 'aircraft', 'alt', 'speed', 'dist'] as const;
export type Sort = (typeof SORTS)[number];

export interface MapView {
  /** Centre (latitude, longitude) and zoom (1 = the whole world fits); null: the whole world. */
  centre: [number, number] | null;
  zoom: number;
  /** The selected pilot, and whether the map follows it. */
  sel: string | null;
  follow: boolean;
  /** The pilot filter (callsign, aircraft or model substring). */
  q: string;
  panel: Panel;
  /** The pilot list's order, `dir` -1 for descending. */
  sort: Sort;
  dir: 1 | -1;
  /** The chat panel's filters: only lines sent in the visible area; only this frequency (MHz). */
  area: boolean;
  freq: number | null;
}

/**
 * From this window width (CSS pixels) the pilot list is open unless the link says
 * otherwise (`panel=none`): its 22rem leave the map at least 750 pixels. Narrower, on a
 * phone, the panel goes under the map and starts closed.
 */
export const WIDE_PX = 1100;

/** The view with nothing chosen; `wide`: a window of WIDE_PX or more, where the pilot list is open. */
export function defaults(wide = false): MapView {
  return { centre: null, zoom: 1, sel: null, follow: false, q: '', panel: wide ? 'pilots' : null, sort: 'callsign', dir: 1, area: false, freq: null };
}

const num = (s: string | null) => (s === null || s.trim() === '' ? NaN : Number(s));

export function parse(query: string, wide = false): MapView {
  const p = new URLSearchParams(query);
  const v = defaults(wide);
  const c = (p.get('c') ?? '').split(',').map((x) => num(x));
  if (c.length === 2 && c.every(Number.isFinite) && Math.abs(c[0]) <= 90 && Math.abs(c[1]) <= 180) v.centre = [c[0], c[1]];
  const z = num(p.get('z'));
  if (Number.isFinite(z) && z >= 1) v.zoom = z;
  v.sel = p.get('sel') || null;
  v.follow = v.sel !== null && p.get('follow') === '1';
  v.q = p.get('q') ?? '';
  const panel = p.get('panel');
  if ((PANELS as readonly string[]).includes(panel ?? '')) v.panel = panel as Panel;
  if (panel === 'none') v.panel = null;
  const sort = p.get('sort') ?? '';
  const key = sort.replace(/^-/, '');
  if ((SORTS as readonly string[]).includes(key)) { v.sort = key as Sort; v.dir = sort.startsWith('-') ? -1 : 1; }
  v.area = p.get('area') === '1';
  const f = num(p.get('freq'));
  if (Number.isFinite(f) && f > 0) v.freq = f;
  return v;
}

export function format(v: MapView, wide = false): string {
  const p = new URLSearchParams();
  if (v.centre && v.zoom > 1.001) {
    p.set('c', `${v.centre[0].toFixed(4)},${v.centre[1].toFixed(4)}`);
    p.set('z', String(Number(v.zoom.toFixed(2))));
  }
  if (v.sel) p.set('sel', v.sel);
  if (v.sel && v.follow) p.set('follow', '1');
  if (v.q) p.set('q', v.q);
  if (v.panel !== defaults(wide).panel) p.set('panel', v.panel ?? 'none');
  if (v.sort !== 'callsign' || v.dir !== 1) p.set('sort', `${v.dir < 0 ? '-' : ''}${v.sort}`);
  if (v.area) p.set('area', '1');
  if (v.freq !== null) p.set('freq', String(v.freq));
  // A comma needs no escape in a fragment: `c=64.0000,-22.6000` reads better.
  return p.toString().replace(/%2C/g, ',');
}

/** Same frequency, to the 5 kHz a radio tunes. */
export function sameFreq(a: number | null | undefined, b: number | null | undefined): boolean {
  return a !== null && a !== undefined && b !== null && b !== undefined && Math.abs(a - b) < 0.0025;
}
