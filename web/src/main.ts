// lobby's page: four views behind tabs (#map, #servers, #heatmaps, #backbone). The
// hash holds the view and, after a `?`, the view's state: the server browser's sort and
// filters (`#servers?sort=-ping&gamedir=valve`), the map's centre, zoom, selected pilot,
// filters and open panel (`#map?c=64.0,-22.6&z=40&sel=BIKF_TW&panel=atc`), so a link
// opens the same view.

import { $ } from './util';
import { initMap, mapShown, mapHooks, mapFromHash } from './map';
import { initPanels, panelsShown, panelHooks } from './panels';
import { airportHooks } from './airports';
import { initServers, serversFromHash, serverHooks } from './servers';
import { initHeatmaps, heatmapHooks } from './heatmaps';
import { initBackbone, backboneHooks } from './backbone';

const VIEWS = ['map', 'servers', 'heatmaps', 'backbone'] as const;
type View = (typeof VIEWS)[number];
let current: View = 'map';

/** The view the hash names, and its query (after `?`; null when there is none). */
function fromHash(): [View, string | null] {
  const hash = location.hash.replace(/^#/, '');
  const q = hash.indexOf('?');
  const v = q < 0 ? hash : hash.slice(0, q);
  return [(VIEWS as readonly string[]).includes(v) ? (v as View) : 'map', q < 0 ? null : hash.slice(q + 1)];
}

const starters: Partial<Record<View, () => void>> = {};

function show(v: View) {
  current = v;
  for (const name of VIEWS) {
    $(`view-${name}`).hidden = name !== v;
    $(`tab-${name}`).setAttribute('aria-selected', String(name === v));
  }
  if (v === 'map') { mapShown(); panelsShown(); }
  starters[v]?.();
}

function route() {
  const [v, query] = fromHash();
  show(v);
  if (v === 'servers') serversFromHash(query);
  if (v === 'map') mapFromHash(query);
}

function init() {
  initMap(() => current === 'map');
  initPanels(() => current === 'map');
  starters.servers = initServers(() => current === 'servers');
  starters.heatmaps = initHeatmaps(() => current === 'heatmaps');
  starters.backbone = initBackbone(() => current === 'backbone');
  window.addEventListener('hashchange', route);
  route();
}

// Test hooks: where things are and how fast the stream applies; nothing secret.
Object.defineProperty(window, 'lobby', {
  value: Object.assign(Object.create(null), {
    view: () => current,
  }),
});
const hooks = (window as unknown as { lobby: object }).lobby;
for (const src of [mapHooks, panelHooks, airportHooks, serverHooks, heatmapHooks, backboneHooks]) Object.defineProperties(hooks, Object.getOwnPropertyDescriptors(src));

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
