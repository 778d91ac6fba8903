// The selected pilot's details box: its aircraft, class, position, radio, transponder,
// relay, chat lines and flight log (each flight with GPX and KML downloads), as the
// map's state (mapstate.ts) holds them.

import { $, h, int, utc, ago } from './util';
import { CLASSES, LABELS } from './symbols';
import type { ApiPilot, MapState } from './mapstate';

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
/**
 * What a pilot with no frequency sends: FlightGear puts one (property 13001) in its
 * datagrams only while the pilot transmits on its built-in FGCom (push-to-talk held);
 * the rest of the time, and with FGCom-mumble or FGCom off, it sends 0 or nothing
 * (docs/notes/flightgear-multiplayer.md, "The transmit frequency").
 */
export const NO_RADIO = 'none sent';
export const NO_RADIO_WHY = 'FlightGear sends a transmit frequency only while the pilot talks on its built-in FGCom (push-to-talk); FGCom-mumble and most pilots send none';

/** A frequency as a radio shows it: `118.3 MHz`, `121.725 MHz`; NO_RADIO when none was sent. */
export function freq(f: number | null | undefined): string {
  return f === null || f === undefined ? NO_RADIO : `${f.toFixed(3).replace(/0{1,2}$/, '')} MHz`;
}

/** Shows the selected pilot's details (hides the box when none is selected). */
export function showDetails(s: MapState) {
  const box = $('details');
  const selected = s.selected;
  const p = selected ? s.pilots.get(selected) : undefined;
  if (!selected) { box.hidden = true; return; }
  const dl = h('dl');
  const x = s.selectedExtra;
  const info = p?.info ?? x;
  if (p) {
    row(dl, 'aircraft', p.info.aircraft_name || p.aircraft || '–');
    row(dl, 'class', LABELS[CLASSES[p.cls]]);
    row(dl, 'model', p.model || '–');
    row(dl, 'position', p.placed ? `${p.lat.toFixed(5)}, ${p.lon.toFixed(5)}` : '–');
    row(dl, 'altitude', p.placed ? `${int(p.alt_ft)} ft` : 'not placed yet (its client is loading the scenery)');
    row(dl, 'heading', `${int(p.heading)}°`);
    row(dl, 'speed', `${int(p.ground_speed_kt)} kt`);
  }
  row(dl, 'pitch', x && x.pitch !== null && x.pitch !== undefined ? `${x.pitch.toFixed(1)}°` : '–');
  row(dl, 'roll', x && x.roll !== null && x.roll !== undefined ? `${x.roll.toFixed(1)}°` : '–');
  if (info) {
    row(dl, 'frequency', freq(info.frequency_mhz));
    if (info.frequency_mhz === null || info.frequency_mhz === undefined) dl.lastElementChild?.setAttribute('title', NO_RADIO_WHY);
    row(dl, 'transponder', transponder(info.transponder));
    row(dl, 'protocol', info.protocol ? `v${info.protocol}` : '–');
    if (info.livery) row(dl, 'livery', info.livery);
    if (x?.rate_hz !== null && x?.rate_hz !== undefined) row(dl, 'rate', `${x.rate_hz.toFixed(1)} Hz`);
  }
  if (p) {
    row(dl, 'via', p.local ? 'this relay' : `relay ${p.relay ?? '?'}`);
    row(dl, 'online since', `${utc(p.online_since)} (${ago(p.online_since, s.latest)})`);
  }
  if (x?.last_seen) row(dl, 'last seen', ago(x.last_seen, s.latest));
  const chat = h('div', { class: 'pilot-chat' }, h('h4', {}, `Chat (${s.selectedChat.length})`),
    s.selectedChat.length === 0 ? h('p', {}, 'nothing said recently') :
      h('ol', {}, ...s.selectedChat.slice(-20).reverse().map((l) => h('li', {}, h('time', {}, utc(l.at).slice(11, 16)), ' ', l.text))));
  const log = s.selectedFlights === null ? null : h('div', { class: 'flight-log' },
    h('h4', {}, `Flight log (${s.selectedFlights.length} recent)`),
    s.selectedFlights.length === 0 ? h('p', {}, 'no flights recorded') :
      h('ol', {}, ...s.selectedFlights.map((f) => h('li', { 'data-flight': f.id },
        `${utc(f.start)} · ${int(f.duration_s / 60)} min · ${f.distance_nm.toFixed(1)} nm · ${f.aircraft_name || (f.model.split('/').pop()?.replace(/\.xml$/, '') ?? f.model)}`,
        f.departure || f.arrival ? ` · ${f.departure ?? '?'} → ${f.arrival ?? (f.end === null ? '…' : '?')}` : '',
        f.end === null ? ' (flying)' : '',
        ' ', h('a', { href: `/api/flights/${f.id}/gpx`, download: '', class: 'dl' }, 'GPX'),
        ' ', h('a', { href: `/api/flights/${f.id}/kml`, download: '', class: 'dl' }, 'KML')))),
    s.selectedFlights.length === 0 ? '' : h('p', {}, h('a', { href: `/api/callsigns/${encodeURIComponent(selected)}/csv`, download: '', class: 'dl' }, 'All flights as CSV')));
  $('details-body').replaceChildren(h('h3', {}, selected), p ? dl : h('p', {}, 'not on the map now'), chat, log ?? '');
  const follow = $('details-follow');
  follow.setAttribute('aria-pressed', String(s.view.follow));
  box.hidden = false;
}

