// The map's pure modules: its state as the stream changes it and its projection
// (src/mapstate.ts), the frame's layout and clustering (src/maplayout.ts), hit testing
// (src/maphit.ts), and the details' frequency format (src/mapdetails.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from './load.mjs';

const st = await load('mapstate');
const lay = await load('maplayout');
const hit = await load('maphit');
const details = await load('mapdetails');

const W = 1000, H = 500;
/** A map of W × H CSS pixels at pixel ratio 1, zoom `k` centred on (lat, lon) (the whole world at k = 1). */
function map(k = 1, lat = 0, lon = 0) {
  const s = st.newState();
  s.width = W; s.height = H; s.dpr = 1;
  s.projection.fitExtent([[4, 4], [W - 4, H - 4]], { type: 'Sphere' });
  const [x, y] = st.project(s, lon, lat);
  s.t = k === 1 ? { k: 1, x: 0, y: 0 } : { k, x: W / 2 - k * x, y: H / 2 - k * y };
  return s;
}
const pilot = (cs, lat, lon, o = {}) => ({
  callsign: cs, model: 'Aircraft/c172p/Models/c172p.xml', aircraft: 'c172p', aircraft_name: 'Cessna 172P Skyhawk', class: 'single_prop',
  lat, lon, alt_ft: 3000, heading: 90, pitch: 0, roll: 0, ground_speed_kt: 110, local: true, relay: null,
  online_since: 1000, last_seen: 1000, protocol: 1, atc: false, lag_s: 0.1, sim_time: 0, chat: null, rate_hz: 10, ...o,
});
const near = (got, want, tol, what) => assert.ok(Math.abs(got - want) <= tol, `${what}: ${got}, want ${want} ± ${tol}`);

test('projection: screen and back is the same point, at any zoom', () => {
  for (const [k, clat, clon] of [[1, 0, 0], [64, 63.985, -22.6], [4096, -33.9, 151.2]]) {
    const s = map(k, clat, clon);
    near(st.centre(s)[0], k === 1 ? 0 : clat, 1e-6, `centre lat at ${k}`);
    near(st.centre(s)[1], k === 1 ? 0 : clon, 1e-6, `centre lon at ${k}`);
    for (const [lat, lon] of [[clat, clon], [clat + 0.001, clon - 0.001], [51.47, -0.46], [-45, 170]]) {
      const [x, y] = st.toScreen(s, lon, lat);
      const back = st.fromScreen(s, x, y);
      near(back[0], lat, 1e-6, `lat of ${lat},${lon} at ${k}`);
      near(back[1], lon, 1e-6, `lon of ${lat},${lon} at ${k}`);
    }
    assert.equal(st.inView(s, clat, clon), true);
  }
  const s = map(64, 63.985, -22.6);
  assert.equal(st.inView(s, 51.47, -0.46), false);
});

test('viewBoxes: the world when most of it shows, else a box around what shows', () => {
  assert.deepEqual(st.viewBoxes(map(2)), [[-180, -90, 180, 90]]);
  const [[w, s, e, n]] = st.viewBoxes(map(64, 63.985, -22.6));
  assert.ok(w < -22.6 && e > -22.6 && s < 63.985 && n > 63.985, `${[w, s, e, n]}`);
  assert.ok(e - w < 10 && n - s < 5, `${[w, s, e, n]}`);
});

test('a snapshot, then updates: joined, moved (a trail point each 10 s), changed, left', () => {
  const s = map();
  st.applySnapshot(s, { generated_at: 1000, online: 3, pilots: [pilot('A', 10, 20), pilot('B', -5, 30, { class: 'airliner' }), pilot('C', 0, 0, { class: 'zeppelin' })] });
  assert.equal(s.pilots.size, 3);
  assert.deepEqual([s.shownCount, s.online, s.latest], [3, 3, 1000]);
  const a = s.pilots.get('A');
  assert.deepEqual([a.x, a.y], st.project(s, 20, 10));
  assert.equal(a.tn, 1);
  assert.equal(s.pilots.get('B').cls, 0); // airliner
  assert.equal(s.pilots.get('C').cls, 10); // unknown: other
  // Heading 90° at the equator points right on the screen.
  near(a.a, Math.PI / 2, 0.05, 'screen angle of heading 90');

  st.applyUpdate(s, { generated_at: 1005, online: 3, joined: [], left: [], moved: [['A', 10.1, 20.1, 3100, 180, 120]] });
  assert.deepEqual([a.lat, a.lon, a.alt_ft, a.heading, a.ground_speed_kt], [10.1, 20.1, 3100, 180, 120]);
  assert.equal(a.tn, 1, 'no trail point within 10 s');
  near(a.a, Math.PI, 0.05, 'screen angle of heading 180');
  st.applyUpdate(s, { generated_at: 1010, online: 3, joined: [], left: [], moved: [['A', 10.2, 20.2, 3100, 180, 120], ['gone', 1, 1, 1, 1, 1]] });
  assert.equal(a.tn, 2);
  const last = st.trailIndex(a, a.tn - 1);
  near(a.tll[2 * last], 20.2, 1e-5, 'trail lon');
  assert.equal(a.tt[last], 1010);

  st.applyUpdate(s, { generated_at: 1011, online: 4, joined: [pilot('D', 1, 1, { chat: 'hello' })], left: ['C'], moved: [],
    changed: [pilot('B', -5, 30, { class: 'glider', aircraft_name: 'ASK 21', chat: 'ignored', rate_hz: 1 })] });
  assert.deepEqual([...s.pilots.keys()].sort(), ['A', 'B', 'D']);
  assert.deepEqual([s.shownCount, s.online, s.latest], [3, 4, 1011]);
  const b = s.pilots.get('B');
  assert.equal(b.cls, 5); // glider
  assert.equal(b.info.aircraft_name, 'ASK 21');
  // changed keeps the chat, rate and lag that joined said.
  assert.equal(b.info.chat, null);
  assert.equal(b.info.rate_hz, 10);
  assert.ok(b.key.includes('ask 21'));

  // A filter over callsign, aircraft, readable name and model, any case.
  st.setFilter(s, '  ASK ');
  assert.equal(s.shownCount, 1);
  assert.deepEqual([...s.pilots.values()].filter((p) => p.shown).map((p) => p.callsign), ['B']);
  st.setFilter(s, 'SKYHAWK');
  assert.equal(s.shownCount, 2);
  st.setFilter(s, 'c172p');
  assert.equal(s.shownCount, 3);
  st.setFilter(s, '');
  assert.equal(s.shownCount, 3);
  // A new snapshot replaces everything.
  st.applySnapshot(s, { generated_at: 2000, online: 1, pilots: [pilot('E', 0, 0)] });
  assert.deepEqual([...s.pilots.keys()], ['E']);
  assert.equal(s.shownCount, 1);
});

test('a client still loading its scenery is not drawn and leaves no trail (issue 29, item 5)', () => {
  // The real client's start (testdata/fg/c172p_TEST1_onground_startup.lpf): the airport's
  // reference point at -9,999 ft, the runway at -9,999 ft, then the runway at 145.5 ft.
  const s = map(64, 63.985, -22.6);
  st.applySnapshot(s, { generated_at: 1000, online: 1, pilots: [pilot('TEST1', 63.98313, -22.59145, { alt_ft: -9999, ground_speed_kt: 0 })] });
  const p = s.pilots.get('TEST1');
  assert.equal(p.placed, false);
  assert.equal(p.tn, 0, 'no trail point');
  assert.ok(!Number.isFinite(p.x), 'nowhere');
  lay.layout(s, W, H);
  assert.equal(p.drawn, st.NOT_DRAWN);
  assert.equal(hit.hit(s, W / 2, H / 2), null);
  st.applyUpdate(s, { generated_at: 1010, online: 1, moved: [['TEST1', 63.99173, -22.60935, -9999, 0, 0]] });
  assert.equal(p.tn, 0, 'still no trail point');
  st.applyUpdate(s, { generated_at: 1020, online: 1, moved: [['TEST1', 63.99173, -22.60935, 145.5, 0, 0]] });
  assert.equal(p.placed, true);
  assert.equal(p.tn, 1);
  near(p.tll[1], 63.99173, 1e-4, 'the trail begins on the runway');
  lay.layout(s, W, H);
  assert.equal(p.drawn, p.cls);
  assert.equal(s.shownCount, 1, 'still counted as online and shown in the list');
});

test('reproject: positions and trails follow a new fit', () => {
  const s = map();
  st.applySnapshot(s, { generated_at: 1000, online: 1, pilots: [pilot('A', 10, 20)] });
  s.projection.fitExtent([[0, 0], [2000, 1000]], { type: 'Sphere' });
  st.reproject(s);
  const a = s.pilots.get('A');
  assert.deepEqual([a.x, a.y], st.project(s, 20, 10));
  assert.deepEqual([a.txy[0], a.txy[1]], [Math.fround(a.x), Math.fround(a.y)]);
});

const crowd = (n, lat, lon, prefix) => Array.from({ length: n }, (_, i) => pilot(`${prefix}${i}`, lat + i * 0.001, lon));

test('layout: a crowd at low zoom is one bubble; the selected pilot, few pilots and a deep zoom are drawn alone', () => {
  const s = map();
  st.applySnapshot(s, { generated_at: 1, online: 18, pilots: [...crowd(10, 50, 10, 'eu'), ...crowd(6, -30, 140, 'au'), ...crowd(2, 0, -150, 'pa')] });
  s.selected = 'eu3';
  lay.layout(s, W, H);
  const bubbles = s.bubbles.map((q) => q.n).sort((x, y) => x - y);
  assert.deepEqual(bubbles, [6, 9]);
  assert.equal(s.pilots.get('eu3').drawn, s.pilots.get('eu3').cls, 'the selected pilot is drawn alone');
  assert.equal(s.pilots.get('eu4').drawn, st.CLUSTERED);
  assert.equal(s.pilots.get('pa0').drawn, s.pilots.get('pa0').cls, 'two pilots are no cluster');
  // The bubble sits on its pilots' mean position.
  const [bx, by] = st.toScreen(s, 140, -30 + 0.0025);
  const au = s.bubbles.find((q) => q.n === 6);
  near(au.x, bx, 0.5, 'bubble x'); near(au.y, by, 0.5, 'bubble y');
  near(au.r, lay.bubbleRadius(6), 0, 'bubble radius');
  // Filtered out or off screen: not drawn.
  st.setFilter(s, 'au');
  lay.layout(s, W, H);
  assert.equal(s.pilots.get('eu0').drawn, st.NOT_DRAWN);
  assert.deepEqual(s.bubbles.map((q) => q.n), [6]);
  st.setFilter(s, '');
  const deep = map(lay.CLUSTER_K, 50, 10);
  st.applySnapshot(deep, { generated_at: 1, online: 12, pilots: [...crowd(10, 50, 10, 'eu'), pilot('far', -30, 140)] });
  lay.layout(deep, W, H);
  assert.deepEqual(deep.bubbles, []);
  assert.equal(deep.pilots.get('eu0').drawn, deep.pilots.get('eu0').cls);
  assert.equal(deep.pilots.get('far').drawn, st.NOT_DRAWN);
});

test('callsign labels at regional zoom: beside their symbols, never overlapping (issue 29, item 7)', () => {
  const overlap = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
  // Twelve pilots 0.1° (about 18 pixels) apart around Keflavik, one alone to the north; at zoom 64.
  const s = map(64, 63.985, -22.6);
  const pilots = [];
  for (let i = 0; i < 12; i++) pilots.push(pilot(`KEF${i}`, 63.985 + 0.1 * (i % 4), -22.6 + 0.2 * Math.floor(i / 4)));
  pilots.push(pilot('ALONE', 65.2, -22.6));
  st.applySnapshot(s, { generated_at: 1, online: pilots.length, pilots });
  s.selected = 'KEF5';
  lay.layout(s, W, H);
  const labels = s.labels;
  assert.ok(labels.length >= 8, `${labels.length} labels`);
  assert.equal(labels[0].p.callsign, 'KEF5', 'the selected pilot is labelled first');
  const alone = labels.find((l) => l.p.callsign === 'ALONE');
  assert.ok(alone, 'a pilot alone is labelled');
  const ax = alone.p.sx, ay = alone.p.sy;
  assert.ok(alone.box[0] > ax && alone.box[0] - ax < 12 && Math.abs((alone.box[1] + alone.box[3]) / 2 - ay) < 1, 'to the right of its symbol');
  for (const [i, a] of labels.entries()) {
    assert.ok(a.box[0] >= 0 && a.box[1] >= 0 && a.box[2] <= W && a.box[3] <= H, 'on the map');
    for (const b of labels.slice(i + 1)) assert.ok(!overlap(a.box, b.box), `${a.p.callsign} and ${b.p.callsign} overlap`);
    for (const p of s.pilots.values()) {
      if (p.drawn < 0 || a.p.callsign === 'KEF5') continue; // the selected pilot's label goes where it must
      assert.ok(!overlap(a.box, [p.sx - 7, p.sy - 7, p.sx + 7, p.sy + 7]), `${a.p.callsign}'s label on ${p.callsign}'s symbol`);
    }
  }
  // At a continent's zoom, none.
  const far = map(lay.LABEL_K / 2, 63.985, -22.6);
  st.applySnapshot(far, { generated_at: 1, online: pilots.length, pilots });
  lay.layout(far, W, H);
  assert.deepEqual(far.labels, []);
});

test('bubble labels and sizes', () => {
  assert.deepEqual([6, 999, 1000, 1234, 9999, 12345].map(lay.bubbleLabel), ['6', '999', '1.0k', '1.2k', '10.0k', '12k']);
  near(lay.bubbleRadius(1), 10, 1e-9, 'radius of 1');
  near(lay.bubbleRadius(10), 13.2, 1e-9, 'radius of 10');
  assert.equal(lay.bubbleRadius(1e9), 24);
});

test('hit testing: the nearest shown pilot within 10 pixels, never one inside a bubble; bubbles by radius', () => {
  const s = map(64, 50, 10);
  st.applySnapshot(s, { generated_at: 1, online: 3, pilots: [pilot('A', 50, 10), pilot('B', 50, 10.2), pilot('hidden', 50.001, 10)] });
  st.setFilter(s, '');
  s.pilots.get('hidden').shown = false;
  s.gridDirty = true;
  lay.layout(s, W, H);
  const [ax, ay] = st.toScreen(s, 10, 50);
  const [bx] = st.toScreen(s, 10.2, 50);
  assert.ok(bx - ax > 20, `A and B ${bx - ax} px apart`);
  assert.equal(hit.hit(s, ax, ay).callsign, 'A');
  assert.equal(hit.hit(s, ax + 9, ay).callsign, 'A');
  assert.equal(hit.hit(s, ax, ay - 11), null);
  assert.equal(hit.hit(s, bx - 3, ay + 2).callsign, 'B');
  // Between the two: the nearer.
  assert.equal(hit.hit(s, bx - 9, ay).callsign, 'B');
  assert.equal(hit.hit(s, ax + 9, ay).callsign, 'A');
  assert.equal(hit.hit(s, (ax + bx) / 2, ay), null);
  s.pilots.get('A').drawn = st.CLUSTERED;
  assert.equal(hit.hit(s, ax, ay), null);

  s.bubbles = [{ x: 100, y: 100, r: 12, n: 7 }, { x: 120, y: 100, r: 12, n: 30 }];
  assert.equal(hit.bubbleAt(s, 100, 113.9).n, 7);
  assert.equal(hit.bubbleAt(s, 100, 114.1), null);
  assert.equal(hit.bubbleAt(s, 111, 100).n, 30);
  assert.equal(hit.bubbleAt(s, 300, 300), null);
});

test('frequencies as a radio shows them', () => {
  assert.equal(details.freq(118.3), '118.3 MHz');
  assert.equal(details.freq(121.725), '121.725 MHz');
  assert.equal(details.freq(118), '118.0 MHz');
  // Issue 29, item 8: no frequency is what most FlightGear pilots send, not a blank.
  assert.equal(details.freq(null), 'none sent');
  assert.equal(details.freq(undefined), 'none sent');
});
