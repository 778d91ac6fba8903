// Distances on the Earth, as lobby's Rust side measures them (the `airports` crate's
// great-circle distance): a sphere of the mean Earth radius.

/** The mean Earth radius (IUGG), metres: the same as the Rust side's. */
export const EARTH_RADIUS_M = 6_371_008.8;
/** Metres in a nautical mile. */
export const METRES_PER_NM = 1852;
/** The mean Earth radius in nautical miles (about 3,440.069). */
export const EARTH_RADIUS_NM = EARTH_RADIUS_M / METRES_PER_NM;

/** Great-circle distance in nautical miles between two points (degrees), by the haversine formula. */
export function distanceNm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * r) / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * EARTH_RADIUS_NM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * Altitudes at or below this are not a place yet, feet: FlightGear sends -9,999 ft (and
 * the airport's reference point, then its start position) until its scenery has loaded.
 * No airport lies below about -1,300 ft. The flight log's rule (flightlog's
 * `logbook::UNPLACED_BELOW_FT`), documented in docs/API.md under `alt_ft`.
 */
export const UNPLACED_BELOW_FT = -2000;

/** Whether a pilot at `altFt` is somewhere yet (not a client still loading its scenery). */
export function placed(altFt: number): boolean {
  return Number.isFinite(altFt) && altFt > UNPLACED_BELOW_FT;
}
