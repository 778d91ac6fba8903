// The server browser's view (src/serverview.ts): the URL, the filters, the order.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from './load.mjs';

const sv = await load('serverview');

const server = (o) => ({
  address: '192.0.2.1:27015', name: 'x', gamedir: 'valve', map: 'crossfire', players: 0, max: 16, bots: 0,
  password: false, dedicated: true, os: 'l', nat: false, version: '0.21', protocol: 49, region: 255,
  registered_since: 1000, last_heartbeat: 2000, ping_ms: null, ...o,
});
const view = (o = {}) => ({ ...sv.defaults(), ...o });
const addrs = (list) => list.map((s) => s.address);

test('the URL: only what differs from the defaults, in a fixed order, read back the same', () => {
  assert.equal(sv.format(sv.defaults()), '');
  const q = 'sort=-players&gamedir=valve&notfull=1&open=203.0.113.7%3A27015';
  assert.equal(sv.format(sv.parse(q)), q);
  const v = view({ sort: 'ping', dir: 1, q: 'dust 2', gamedir: 'cstrike', map: 'de_dust2', proto: 'goldsrc',
    notfull: true, notempty: true, nopass: true, show: 'fav', open: '[2001:db8::1]:27015' });
  assert.deepEqual(sv.parse(sv.format(v)), v);
  assert.deepEqual(sv.parse('sort=-bogus&proto=quake&show=none&notfull=yes&open='), sv.defaults());
});

test('filters: game, map, protocol, full, empty, password, and the text over name, address, map, game, version', () => {
  const a = server({ address: '192.0.2.1:27015', name: 'Alpha', players: 16, max: 16 });
  const b = server({ address: '192.0.2.2:27015', name: 'Bravo', gamedir: 'cstrike', map: 'de_dust2', protocol: 48, password: true, players: 3 });
  const c = server({ address: '192.0.2.3:27016', name: '  ', version: '0.19.2' });
  const pass = (v, text = '') => [a, b, c].filter((s) => sv.passes(s, v, text)).map((s) => s.name);
  assert.deepEqual(pass(view()), ['Alpha', 'Bravo', '  ']);
  assert.deepEqual(pass(view({ gamedir: 'cstrike' })), ['Bravo']);
  assert.deepEqual(pass(view({ map: 'crossfire' })), ['Alpha', '  ']);
  assert.deepEqual(pass(view({ proto: 'xash' })), ['Alpha', '  ']);
  assert.deepEqual(pass(view({ proto: 'goldsrc' })), ['Bravo']);
  assert.deepEqual(pass(view({ notfull: true })), ['Bravo', '  ']);
  assert.deepEqual(pass(view({ notempty: true })), ['Alpha', 'Bravo']);
  assert.deepEqual(pass(view({ nopass: true })), ['Alpha', '  ']);
  // The text is lower-cased by the caller.
  assert.deepEqual(pass(view(), 'bravo'), ['Bravo']);
  assert.deepEqual(pass(view(), 'dust2'), ['Bravo']);
  assert.deepEqual(pass(view(), ':27016'), ['  ']);
  assert.deepEqual(pass(view(), '0.19'), ['  ']);
  assert.equal(sv.filtered(view({ q: 'x', show: 'fav', sort: 'name' })), false);
  assert.equal(sv.filtered(view({ notempty: true })), true);
});

test('names: the address when the name is blank; protocol names', () => {
  assert.equal(sv.nameOf(server({ name: ' Crossfire 24/7 ' })), 'Crossfire 24/7');
  assert.equal(sv.nameOf(server({ name: '   ' })), '192.0.2.1:27015');
  assert.equal(sv.nameOf(server({ name: null })), '192.0.2.1:27015');
  assert.equal(sv.protocolName(49), 'Xash3D');
  assert.equal(sv.protocolName(48), 'GoldSrc');
  assert.equal(sv.protocolName(47), 'protocol 47');
  assert.equal(sv.protocolName(null), '–');
});

test('sorting: each column both ways, ties by address, an unknown ping last either way', () => {
  const list = [
    server({ address: '192.0.2.10:1', name: 'server 10', players: 5, ping_ms: 40, map: 'b' }),
    server({ address: '192.0.2.9:1', name: 'Server 9', players: 5, max: 8, ping_ms: null, map: 'a' }),
    server({ address: '192.0.2.2:1', name: 'alpha', players: 12, ping_ms: 15, map: 'b', registered_since: 5 }),
  ];
  const none = new Set();
  // Numeric-aware, case-insensitive names.
  assert.deepEqual(addrs(sv.sorted(list, view({ sort: 'name' }), none, [])), ['192.0.2.2:1', '192.0.2.9:1', '192.0.2.10:1']);
  assert.deepEqual(addrs(sv.sorted(list, view({ sort: 'name', dir: -1 }), none, [])), ['192.0.2.10:1', '192.0.2.9:1', '192.0.2.2:1']);
  // Players, then the slots.
  assert.deepEqual(addrs(sv.sorted(list, view({ sort: 'players' }), none, [])), ['192.0.2.9:1', '192.0.2.10:1', '192.0.2.2:1']);
  // The unknown round trip last both ways.
  assert.deepEqual(addrs(sv.sorted(list, view({ sort: 'ping' }), none, [])), ['192.0.2.2:1', '192.0.2.10:1', '192.0.2.9:1']);
  assert.deepEqual(addrs(sv.sorted(list, view({ sort: 'ping', dir: -1 }), none, [])), ['192.0.2.10:1', '192.0.2.2:1', '192.0.2.9:1']);
  // Equal maps: by address (numeric-aware).
  assert.deepEqual(addrs(sv.sorted(list, view({ sort: 'map' }), none, [])), ['192.0.2.9:1', '192.0.2.2:1', '192.0.2.10:1']);
  assert.deepEqual(addrs(sv.sorted(list, view({ sort: 'since' }), none, [])), ['192.0.2.2:1', '192.0.2.9:1', '192.0.2.10:1']);
  // Favourites first ascending, last descending.
  const fav = new Set(['192.0.2.10:1']);
  assert.equal(sv.sorted(list, view({ sort: 'fav' }), fav, [])[0].address, '192.0.2.10:1');
  assert.equal(sv.sorted(list, view({ sort: 'fav', dir: -1 }), fav, []).at(-1).address, '192.0.2.10:1');
  // The input is not reordered.
  assert.deepEqual(addrs(list), ['192.0.2.10:1', '192.0.2.9:1', '192.0.2.2:1']);
});

test('unsorted: as listed, or newest first in the recent view', () => {
  const list = [server({ address: 'a:1' }), server({ address: 'b:1' }), server({ address: 'c:1' })];
  assert.deepEqual(addrs(sv.sorted(list, view(), new Set(), ['c:1', 'a:1', 'b:1'])), ['a:1', 'b:1', 'c:1']);
  assert.deepEqual(addrs(sv.sorted(list, view({ show: 'recent' }), new Set(), ['c:1', 'a:1', 'b:1'])), ['c:1', 'a:1', 'b:1']);
  // A sort column wins over the recent order.
  assert.deepEqual(addrs(sv.sorted(list, view({ show: 'recent', sort: 'address', dir: -1 }), new Set(), ['a:1', 'c:1', 'b:1'])), ['c:1', 'b:1', 'a:1']);
});

test('favourites and recent servers without localStorage: kept for the visit, recent capped at 10', () => {
  assert.equal(sv.toggleFavourite('a:1'), true);
  assert.equal(sv.favourites.has('a:1'), true);
  assert.equal(sv.toggleFavourite('a:1'), false);
  for (let i = 0; i < 12; i++) sv.viewed(`s:${i}`);
  sv.viewed('s:5');
  assert.equal(sv.recent.length, sv.RECENT_MAX);
  assert.deepEqual(sv.recent.slice(0, 3), ['s:5', 's:11', 's:10']);
  assert.equal(sv.reload('another.key'), false);
});
