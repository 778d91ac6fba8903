// The server browser's view: sort, filters, favourites-only or recently viewed, and the
// server whose details are open. It lives in the URL after the tab's name, in the hash
// the page already uses for its tabs (`#servers?sort=-ping&gamedir=valve&notfull=1`),
// so a link opens the same view. Favourites and recently viewed servers are kept in
// localStorage (this browser only).

import { stored, store } from './util';
import type { components } from './api.gen';

/** A server as /api/servers lists it. */
export type Server = components['schemas']['ServerEntry'];

export const KEYS = ['fav', 'name', 'map', 'players', 'ping', 'gamedir', 'nat', 'version', 'since', 'address'] as const;
export type Key = (typeof KEYS)[number];
export type Show = 'all' | 'fav' | 'recent';
export type Proto = '' | 'xash' | 'goldsrc';

export interface View {
  sort: Key | null;
  dir: 1 | -1;
  /** Name substring (also matches the address, map, game and version). */
  q: string;
  gamedir: string;
  map: string;
  proto: Proto;
  notfull: boolean;
  notempty: boolean;
  nopass: boolean;
  show: Show;
  /** The server whose details are open. */
  open: string | null;
}

export function defaults(): View {
  return { sort: null, dir: 1, q: '', gamedir: '', map: '', proto: '', notfull: false, notempty: false, nopass: false, show: 'all', open: null };
}

const FLAGS = ['notfull', 'notempty', 'nopass'] as const;

/** The view a hash's query (`sort=-ping&q=dust`, after the `?`) describes; unknown keys are ignored. */
export function parse(query: string): View {
  const p = new URLSearchParams(query);
  const v = defaults();
  const sort = p.get('sort') ?? '';
  const key = sort.replace(/^-/, '');
  if ((KEYS as readonly string[]).includes(key)) { v.sort = key as Key; v.dir = sort.startsWith('-') ? -1 : 1; }
  v.q = p.get('q') ?? '';
  v.gamedir = p.get('gamedir') ?? '';
  v.map = p.get('map') ?? '';
  const proto = p.get('proto');
  if (proto === 'xash' || proto === 'goldsrc') v.proto = proto;
  for (const f of FLAGS) v[f] = p.get(f) === '1';
  const show = p.get('show');
  if (show === 'fav' || show === 'recent') v.show = show;
  v.open = p.get('open') || null;
  return v;
}

/** The query for `v`: only what differs from the defaults, in a fixed order. */
export function format(v: View): string {
  const p = new URLSearchParams();
  if (v.sort) p.set('sort', `${v.dir < 0 ? '-' : ''}${v.sort}`);
  if (v.q) p.set('q', v.q);
  if (v.gamedir) p.set('gamedir', v.gamedir);
  if (v.map) p.set('map', v.map);
  if (v.proto) p.set('proto', v.proto);
  for (const f of FLAGS) if (v[f]) p.set(f, '1');
  if (v.show !== 'all') p.set('show', v.show);
  if (v.open) p.set('open', v.open);
  return p.toString();
}

/** Does `s` pass the view's filters (not the favourites/recent choice)? */
export function passes(s: Server, v: View, text: string): boolean {
  if (v.gamedir && s.gamedir !== v.gamedir) return false;
  if (v.map && s.map !== v.map) return false;
  if (v.proto === 'xash' && s.protocol !== 49) return false;
  if (v.proto === 'goldsrc' && s.protocol !== 48) return false;
  if (v.notfull && s.players >= s.max) return false;
  if (v.notempty && s.players <= 0) return false;
  if (v.nopass && s.password) return false;
  return !text || `${nameOf(s)}\n${s.address}\n${s.map}\n${s.gamedir}\n${s.version}`.toLowerCase().includes(text);
}

export const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Column `k`'s order of two servers, ascending (`fav`: favourites first). */
export function compare(a: Server, b: Server, k: Key, favourites: ReadonlySet<string>): number {
  switch (k) {
    case 'fav': return Number(favourites.has(b.address)) - Number(favourites.has(a.address));
    case 'name': return collator.compare(nameOf(a), nameOf(b));
    case 'players': return a.players - b.players || a.max - b.max || a.bots - b.bots;
    case 'ping': return (a.ping_ms ?? 0) - (b.ping_ms ?? 0);
    case 'nat': return Number(a.nat) - Number(b.nat);
    case 'since': return a.registered_since - b.registered_since;
    case 'address': return collator.compare(a.address, b.address);
    default: return collator.compare(String(a[k] ?? ''), String(b[k] ?? ''));
  }
}

/**
 * `list` in the view's order (a new array): by its sort column and direction, ties by
 * address, a server whose round trip is unknown last either way when sorted by ping;
 * unsorted, the recent view is newest first (`recent`'s order) and the rest as listed.
 */
export function sorted(list: Server[], v: View, favourites: ReadonlySet<string>, recent: readonly string[]): Server[] {
  if (v.sort) {
    const k = v.sort, dir = v.dir;
    return list.slice().sort((a, b) => {
      const an = a.ping_ms ?? null, bn = b.ping_ms ?? null;
      if (k === 'ping' && (an === null) !== (bn === null)) return an === null ? 1 : -1;
      return dir * compare(a, b, k, favourites) || collator.compare(a.address, b.address);
    });
  }
  if (v.show === 'recent') {
    const at = new Map(recent.map((a, i) => [a, i]));
    return list.slice().sort((a, b) => (at.get(a.address) ?? Infinity) - (at.get(b.address) ?? Infinity));
  }
  return list;
}

/** Is any filter beyond the text one set (a server not listed now cannot pass those)? */
export function filtered(v: View): boolean {
  return Boolean(v.gamedir || v.map || v.proto || v.notfull || v.notempty || v.nopass);
}

export function nameOf(s: Server): string {
  return (s.name ?? '').trim() || s.address;
}

export function protocolName(p: number | null | undefined): string {
  if (p === 49) return 'Xash3D';
  if (p === 48) return 'GoldSrc';
  return p === null || p === undefined ? '–' : `protocol ${p}`;
}

// Favourites and recently viewed servers, by address.
const FAV_KEY = 'lobby.servers.favourites';
const RECENT_KEY = 'lobby.servers.recent';
export const RECENT_MAX = 10;
const strings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');

export const favourites = new Set<string>(stored(FAV_KEY, [], strings));
/** Most recently opened first, at most RECENT_MAX. */
export let recent: string[] = stored(RECENT_KEY, [], strings).slice(0, RECENT_MAX);

export function toggleFavourite(addr: string): boolean {
  const on = !favourites.has(addr);
  if (on) favourites.add(addr); else favourites.delete(addr);
  store(FAV_KEY, [...favourites]);
  return on;
}

export function viewed(addr: string) {
  recent = [addr, ...recent.filter((a) => a !== addr)].slice(0, RECENT_MAX);
  store(RECENT_KEY, recent);
}

/** Another tab changed them: read them again. Returns whether anything was read. */
export function reload(key: string | null): boolean {
  if (key !== null && key !== FAV_KEY && key !== RECENT_KEY) return false;
  favourites.clear();
  for (const a of stored(FAV_KEY, [], strings)) favourites.add(a);
  recent = stored(RECENT_KEY, [], strings).slice(0, RECENT_MAX);
  return true;
}
