// Labels that never overlap: boxes taken so far, by grid cell, so a new label is drawn
// only where it overlaps none (the airports' ICAO codes on the base canvas, the pilots'
// callsigns on the overlay). Pure.

/** A box in CSS pixels: left, top, right, bottom. */
export type Box = [number, number, number, number];

/** Boxes taken so far, found by a grid of `cell`-pixel squares. */
export class Boxes {
  private readonly cells = new Map<number, Box[]>();
  constructor(private readonly cell = 40) {}

  private *keys(b: Box): Generator<number> {
    const G = this.cell;
    for (let gy = Math.floor(b[1] / G); gy <= Math.floor(b[3] / G); gy++) {
      for (let gx = Math.floor(b[0] / G); gx <= Math.floor(b[2] / G); gx++) yield gy * 65536 + gx;
    }
  }

  /** Whether `b` overlaps no box taken. */
  free(b: Box): boolean {
    for (const k of this.keys(b)) {
      for (const o of this.cells.get(k) ?? []) if (b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3]) return false;
    }
    return true;
  }

  /** Takes `b` (whether or not it was free). */
  take(b: Box) {
    for (const k of this.keys(b)) {
      const l = this.cells.get(k);
      if (l) l.push(b); else this.cells.set(k, [b]);
    }
  }

  /** Takes `b` if it is free; whether it was. */
  claim(b: Box): boolean {
    if (!this.free(b)) return false;
    this.take(b);
    return true;
  }
}

/** The label font (11 CSS pixels): the airports' and the pilots'. */
export const LABEL_FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
/** A label's width when it cannot be measured: about 6.6 pixels a character in LABEL_FONT. */
export function guessWidth(text: string): number {
  return 6.6 * text.length;
}
