// The map's symbols (src/symbols.ts): which class a pilot's `class` picks, and that each
// class draws a symbol of its own (on a recording stand-in for a canvas context).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from './load.mjs';

const sym = await load('symbols');

/** A 2D context that records every call and every style set, in order. */
function recorder() {
  const log = [];
  const ctx = new Proxy({}, {
    get: (_, name) => (...args) => { log.push(`${String(name)}(${args.map((a) => (typeof a === 'number' ? a.toFixed(2) : String(a))).join(',')})`); },
    set: (_, name, value) => { log.push(`${String(name)}=${value}`); return true; },
  });
  return { ctx, log };
}

test('the API\'s class names pick their symbol; anything else is `other`', () => {
  assert.equal(sym.CLASSES.length, 11);
  sym.CLASSES.forEach((c, i) => assert.equal(sym.classIndex(c), i, c));
  const other = sym.CLASSES.indexOf('other');
  assert.equal(other, sym.CLASSES.length - 1);
  for (const c of ['', 'Airliner', 'spaceship', null, undefined]) assert.equal(sym.classIndex(c), other, String(c));
  assert.equal(sym.CLASSES[sym.classIndex('glider')], 'glider');
});

test('every class has its own label; only the tower does not turn', () => {
  const labels = sym.CLASSES.map((c) => sym.LABELS[c]);
  assert.ok(labels.every((l) => typeof l === 'string' && l.length > 0));
  assert.equal(new Set(labels).size, labels.length);
  assert.deepEqual(sym.CLASSES.filter((c) => !sym.TURNS(c)), ['atc']);
});

test('each class draws a different symbol in a colour of its own', () => {
  const drawn = new Map();
  for (const c of sym.CLASSES) {
    const { ctx, log } = recorder();
    sym.drawSymbol(ctx, c);
    assert.ok(log.some((l) => l.startsWith('fill(')), `${c} fills a shape`);
    drawn.set(c, log);
  }
  const colours = sym.CLASSES.map((c) => drawn.get(c).find((l) => l.startsWith('fillStyle=')));
  assert.equal(new Set(colours).size, sym.CLASSES.length, `colours: ${colours}`);
  const shapes = sym.CLASSES.map((c) => drawn.get(c).filter((l) => !l.includes('Style=')).join(' '));
  assert.equal(new Set(shapes).size, sym.CLASSES.length);
  // The symbols a reader tells apart by shape: a rotor disc, a circle, a tower's rectangles.
  assert.ok(drawn.get('helicopter').some((l) => l.startsWith('arc(0.00,-1.00,9.00')));
  assert.ok(drawn.get('airship').some((l) => l.startsWith('arc(0.00,0.00,6.50')));
  assert.ok(drawn.get('atc').filter((l) => l.startsWith('rect(')).length >= 2);
  // Airliner and glider outlines are mirrored: as many points left of the centre line as right.
  for (const c of ['airliner', 'glider', 'military_jet']) {
    const xs = drawn.get(c).filter((l) => /^(moveTo|lineTo)\(/.test(l)).map((l) => Number(l.slice(l.indexOf('(') + 1, l.indexOf(','))));
    assert.equal(xs.filter((x) => x > 0).length, xs.filter((x) => x < 0).length, c);
  }
});
