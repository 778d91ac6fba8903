// The map's view in the URL (src/mapview.ts): parse and format.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from './load.mjs';

const mv = await load('mapview');

test('the default view is the bare #map', () => {
  assert.equal(mv.format(mv.defaults()), '');
  assert.deepEqual(mv.parse(''), mv.defaults());
});

test('the README example reads and writes back the same', () => {
  const q = 'c=63.9850,-22.6056&z=64&sel=BIKF_TW&panel=chat&freq=118.3';
  const v = mv.parse(q);
  assert.deepEqual(v.centre, [63.985, -22.6056]);
  assert.equal(v.zoom, 64);
  assert.equal(v.sel, 'BIKF_TW');
  assert.equal(v.panel, 'chat');
  assert.equal(v.freq, 118.3);
  assert.equal(mv.format(v), q);
});

test('every field round-trips, in the fixed order', () => {
  const v = { ...mv.defaults(), centre: [-33.9461, 151.1772], zoom: 12.5, sel: 'QF1 a&b', follow: true, q: 'c172 x',
    panel: 'pilots', sort: 'dist', dir: -1, area: true, freq: 121.5 };
  const q = mv.format(v);
  assert.equal(q, 'c=-33.9461,151.1772&z=12.5&sel=QF1+a%26b&follow=1&q=c172+x&panel=pilots&sort=-dist&area=1&freq=121.5');
  assert.deepEqual(mv.parse(q), v);
});

test('the centre is kept only when zoomed in; coordinates to 4 decimals, zoom to 2', () => {
  assert.equal(mv.format({ ...mv.defaults(), centre: [10, 20], zoom: 1 }), '');
  assert.equal(mv.format({ ...mv.defaults(), centre: [10.123456, 20.98766], zoom: 3.14159 }), 'c=10.1235,20.9877&z=3.14');
});

test('what is out of range or unknown is ignored', () => {
  const v = mv.parse('c=91,0&z=0.5&panel=radar&sort=-height&freq=-1&follow=1&area=yes');
  assert.deepEqual(v, mv.defaults());
  assert.equal(mv.parse('c=10,181').centre, null);
  assert.equal(mv.parse('c=10').centre, null);
  assert.equal(mv.parse('c=,').centre, null);
  // follow needs a selection.
  assert.equal(mv.parse('follow=1').follow, false);
  assert.equal(mv.parse('sel=X&follow=1').follow, true);
  assert.equal(mv.parse('sort=alt').dir, 1);
  assert.equal(mv.parse('sort=-alt').dir, -1);
  assert.equal(mv.parse('sort=callsign').sort, 'callsign');
});

test('sameFreq: the same within 2.5 kHz, never for an unknown frequency', () => {
  assert.equal(mv.sameFreq(118.3, 118.3), true);
  assert.equal(mv.sameFreq(118.3, 118.302), true);
  assert.equal(mv.sameFreq(118.3, 118.305), false);
  assert.equal(mv.sameFreq(null, 118.3), false);
  assert.equal(mv.sameFreq(118.3, undefined), false);
  assert.equal(mv.sameFreq(null, null), false);
});

test('a wide window opens the pilot list unless the link closes it (issue 29, item 7)', () => {
  assert.equal(mv.defaults(true).panel, 'pilots');
  assert.equal(mv.parse('', true).panel, 'pilots');
  assert.equal(mv.format(mv.defaults(true), true), '');
  const closed = { ...mv.defaults(true), panel: null };
  assert.equal(mv.format(closed, true), 'panel=none');
  assert.equal(mv.parse('panel=none', true).panel, null);
  assert.equal(mv.parse('panel=chat', true).panel, 'chat');
  // Narrow: closed unless asked; `panel=none` reads the same there.
  assert.equal(mv.parse('').panel, null);
  assert.equal(mv.parse('panel=none').panel, null);
  assert.equal(mv.format({ ...mv.defaults(), panel: 'pilots' }), 'panel=pilots');
});
