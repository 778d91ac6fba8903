// The page's one great-circle distance (src/geo.ts), on the Rust side's sphere.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from './load.mjs';

const { distanceNm, EARTH_RADIUS_M, EARTH_RADIUS_NM } = await load('geo');

const near = (got, want, tol, what) => assert.ok(Math.abs(got - want) <= tol, `${what}: ${got}, want ${want} ± ${tol}`);

test('the radius is the mean Earth radius the Rust side uses', () => {
  assert.equal(EARTH_RADIUS_M, 6_371_008.8);
  near(EARTH_RADIUS_NM, 3440.069, 0.001, 'radius in nm');
});

test('known distances', () => {
  // One degree of latitude on the mean sphere: 111,195 m (airports' own test), 60.04 nm.
  near(distanceNm(0, 0, 1, 0) * 1852, 111_195, 1, '1° of latitude, m');
  // KJFK to EGLL on the sphere: 2,991 nm (2,999 nm on the WGS84 ellipsoid, which
  // neither side uses).
  near(distanceNm(40.6398, -73.7789, 51.4706, -0.46194), 2991.2, 1, 'KJFK-EGLL');
  // Heathrow to San Francisco: about 8,620 km on the sphere (airports' test).
  near(distanceNm(51.4706, -0.46194, 37.619, -122.375) * 1.852, 8620, 20, 'EGLL-KSFO, km');
  // Half a great circle, along the equator and pole to pole.
  near(distanceNm(0, 0, 0, 180), Math.PI * EARTH_RADIUS_NM, 1e-6, 'antipodes on the equator');
  near(distanceNm(90, 0, -90, 0), Math.PI * EARTH_RADIUS_NM, 1e-6, 'pole to pole');
});

test('symmetric, zero at a point, continuous across the antimeridian', () => {
  assert.equal(distanceNm(63.985, -22.6056, 63.985, -22.6056), 0);
  near(distanceNm(51.47, -0.46, 40.64, -73.78), distanceNm(40.64, -73.78, 51.47, -0.46), 1e-9, 'symmetry');
  near(distanceNm(10, 179.9, 10, -179.9), distanceNm(10, 0, 10, 0.2), 1e-6, 'antimeridian');
});
