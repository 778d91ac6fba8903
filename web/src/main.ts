// lobby's page: three views behind tabs (#map, #servers, #backbone).

import { $ } from './util';
import { initMap, mapShown, mapHooks } from './map';
import { initServers, serverHooks } from './servers';
import { initBackbone, backboneHooks } from './backbone';

const VIEWS = ['map', 'servers', 'backbone'] as const;
type View = (typeof VIEWS)[number];
let current: View = 'map';

function viewFromHash(): View {
  const v = location.hash.replace(/^#/, '');
  return (VIEWS as readonly string[]).includes(v) ? (v as View) : 'map';
}

const starters: Partial<Record<View, () => void>> = {};

function show(v: View) {
  current = v;
  for (const name of VIEWS) {
    $(`view-${name}`).hidden = name !== v;
    $(`tab-${name}`).setAttribute('aria-selected', String(name === v));
  }
  if (v === 'map') mapShown();
  starters[v]?.();
}

function init() {
  initMap(() => current === 'map');
  starters.servers = initServers(() => current === 'servers');
  starters.backbone = initBackbone(() => current === 'backbone');
  window.addEventListener('hashchange', () => show(viewFromHash()));
  show(viewFromHash());
}

// Test hooks: where things are and how fast the stream applies; nothing secret.
Object.defineProperty(window, 'lobby', {
  value: Object.assign(Object.create(null), {
    view: () => current,
  }),
});
const hooks = (window as unknown as { lobby: object }).lobby;
for (const src of [mapHooks, serverHooks, backboneHooks]) Object.defineProperties(hooks, Object.getOwnPropertyDescriptors(src));

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
