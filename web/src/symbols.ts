// The map's aircraft symbols: one shape and colour per class (the `class` of
// /api/pilots, from the written table `fgmp::aircraft` in Rust), nose up, in CSS
// pixels around the pilot's position. They are drawn once per class and heading step
// into sprites (pixel offsets and RGBA values) that map.ts copies into its ImageData,
// and into the legend's small canvases.

export const CLASSES = ['airliner', 'business_jet', 'single_prop', 'twin_prop', 'helicopter', 'glider',
  'military_jet', 'airship', 'ship', 'atc', 'other'] as const;
export type Class = (typeof CLASSES)[number];

export const LABELS: Record<Class, string> = {
  airliner: 'Airliner', business_jet: 'Business jet', single_prop: 'Single prop', twin_prop: 'Twin prop',
  helicopter: 'Helicopter', glider: 'Glider', military_jet: 'Military jet', airship: 'Airship, balloon',
  ship: 'Ship, carrier', atc: 'ATC station', other: 'Other',
};

const COLOURS: Record<Class, string> = {
  airliner: '#ffd27a', business_jet: '#f3ef9a', single_prop: '#9be37a', twin_prop: '#5fd6b0',
  helicopter: '#ff9e6e', glider: '#ffffff', military_jet: '#c9a0ff', airship: '#ff8fc8',
  ship: '#7fb6ff', atc: '#5ee0ff', other: '#c8d0d8',
};

/** The index of a class name in CLASSES; `other` for anything unknown (an older lobby). */
export function classIndex(c: string | null | undefined): number {
  const i = (CLASSES as readonly string[]).indexOf(c ?? '');
  return i < 0 ? CLASSES.length - 1 : i;
}

/** Does the class's symbol turn with the heading? (A tower does not.) */
export const TURNS = (c: Class) => c !== 'atc';

const poly = (a: CanvasRenderingContext2D, pts: number[]) => {
  a.moveTo(pts[0], pts[1]);
  for (let i = 2; i < pts.length; i += 2) a.lineTo(pts[i], pts[i + 1]);
  a.closePath();
};
const mirror = (half: number[]) => {
  // Right half from the nose to the tail's centre line; the left half mirrored.
  const left: number[] = [];
  for (let i = half.length - 2; i >= 2; i -= 2) if (half[i] !== 0) left.push(-half[i], half[i + 1]);
  return [...half, ...left];
};

const AIRLINER = mirror([0, -10, 1.4, -7.5, 1.4, -3, 10, 2.6, 10, 4.2, 1.4, 1.6, 1.1, 6.5, 4.2, 8.8, 4.2, 10, 0, 9]);
const BIZJET = mirror([0, -8, 1, -5.5, 1, -1, 6.5, 2.6, 6.5, 3.6, 1, 2, 1, 6, 3.4, 7.2, 3.4, 8.2, 0, 7.6]);
const SINGLE = mirror([0, -8, 1.2, -7, 1.2, -3.6, 9.5, -3.6, 9.5, -0.6, 1.2, -0.6, 0.8, 5.4, 3.8, 5.4, 3.8, 7.6, 0, 7.6]);
const TWIN = mirror([0, -7, 1.3, -6, 1.3, -2.6, 10.5, -2.6, 10.5, 0.4, 1.3, 0.4, 0.9, 6, 4, 6, 4, 8, 0, 8]);
const GLIDER = mirror([0, -6.5, 0.7, -5, 0.7, -2.4, 12, -1.7, 12, -0.5, 0.7, -0.8, 0.5, 6, 3, 6.4, 3, 7.6, 0, 7.6]);
const MILITARY = mirror([0, -10, 1.4, -5.5, 8, 5, 8, 6.6, 2.2, 6, 3.8, 9, 3.8, 10, 0, 9.2]);
const SHIP = mirror([0, -10, 2.2, -6.5, 3, -2, 3, 8.5, 0, 8.5]);
const OTHER = [0, -8, 6, 7, 0, 3.5, -6, 7];

/** Draws class `c`'s symbol, nose up, centred on (0, 0) of `a`'s current transform. */
export function drawSymbol(a: CanvasRenderingContext2D, c: Class) {
  a.fillStyle = COLOURS[c];
  a.strokeStyle = 'rgba(15,23,32,0.95)';
  a.lineWidth = 1;
  a.lineJoin = 'round';
  const shape = (pts: number[]) => { a.beginPath(); poly(a, pts); a.fill(); a.stroke(); };
  switch (c) {
    case 'airliner': shape(AIRLINER); break;
    case 'business_jet':
      shape(BIZJET);
      a.beginPath(); a.rect(1.1, 2.2, 1.8, 3); a.rect(-2.9, 2.2, 1.8, 3); a.fill(); a.stroke();
      break;
    case 'single_prop':
      shape(SINGLE);
      a.beginPath(); a.moveTo(-3, -8.4); a.lineTo(3, -8.4); a.strokeStyle = COLOURS[c]; a.lineWidth = 1.2; a.stroke();
      break;
    case 'twin_prop':
      shape(TWIN);
      a.beginPath(); a.rect(3.6, -6, 2.2, 5.4); a.rect(-5.8, -6, 2.2, 5.4); a.fill(); a.stroke();
      break;
    case 'helicopter':
      a.beginPath(); a.arc(0, -1, 9, 0, 2 * Math.PI);
      a.fillStyle = 'rgba(255,158,110,0.22)'; a.fill();
      a.strokeStyle = COLOURS[c]; a.lineWidth = 1.2; a.stroke();
      a.fillStyle = COLOURS[c]; a.strokeStyle = 'rgba(15,23,32,0.95)'; a.lineWidth = 1;
      a.beginPath(); a.ellipse(0, -1.5, 2.6, 4.2, 0, 0, 2 * Math.PI); a.fill(); a.stroke();
      a.beginPath(); a.rect(-0.7, 2.5, 1.4, 7.5); a.rect(-2.6, 8.6, 5.2, 1.4); a.fill(); a.stroke();
      break;
    case 'glider': shape(GLIDER); break;
    case 'military_jet': shape(MILITARY); break;
    case 'airship':
      a.beginPath(); a.arc(0, 0, 6.5, 0, 2 * Math.PI); a.fill(); a.stroke();
      a.beginPath(); poly(a, [0, -9.5, 2, -6.2, -2, -6.2]); a.fill(); a.stroke(); // which way it drifts
      break;
    case 'ship':
      shape(SHIP);
      a.beginPath(); a.rect(-1.2, 0, 2.4, 4); a.fillStyle = 'rgba(15,23,32,0.6)'; a.fill();
      break;
    case 'atc':
      // A control tower: the cab on a shaft, on a base.
      a.beginPath(); poly(a, [-6, -8, 6, -8, 4.5, -3.5, -4.5, -3.5]); a.fill(); a.stroke();
      a.beginPath(); a.rect(-1.8, -3.5, 3.6, 10); a.rect(-5, 6.5, 10, 2.5); a.fill(); a.stroke();
      a.beginPath(); a.moveTo(0, -8); a.lineTo(0, -11); a.strokeStyle = COLOURS[c]; a.lineWidth = 1.2; a.stroke();
      break;
    default: shape(OTHER);
  }
}

/** The map draws the symbols this much larger than their coordinates (about 24 pixels across). */
const SCALE = 1.2;

/** One sprite: pixel offsets (x, y pairs) from the centre and the RGBA value of each, little-endian. */
export interface Sprite { off: Int16Array; rgba: Uint32Array }

/**
 * Sprites of every class at `rotations` headings (index [class][rotation]), drawn at
 * device pixel ratio `dpr`. A class that does not turn has the same sprite at each.
 */
export function buildSprites(dpr: number, rotations: number): Sprite[][] {
  const S = Math.ceil(32 * dpr);
  const c = document.createElement('canvas');
  c.width = S * rotations; c.height = S;
  const a = c.getContext('2d', { willReadFrequently: true })!;
  const out: Sprite[][] = [];
  for (const cls of CLASSES) {
    a.setTransform(1, 0, 0, 1, 0, 0);
    a.clearRect(0, 0, c.width, c.height);
    const turns = TURNS(cls);
    const n = turns ? rotations : 1;
    for (let r = 0; r < n; r++) {
      a.setTransform(dpr * SCALE, 0, 0, dpr * SCALE, r * S + S / 2, S / 2);
      a.rotate((r * 2 * Math.PI) / rotations);
      drawSymbol(a, cls);
    }
    const src = new Uint32Array(a.getImageData(0, 0, S * n, S).data.buffer);
    const row: Sprite[] = [];
    for (let r = 0; r < n; r++) {
      const off: number[] = [], rgba: number[] = [];
      for (let y = 0; y < S; y++) {
        for (let x = 0; x < S; x++) {
          const v = src[y * S * n + r * S + x];
          if (v >>> 24 > 24) { off.push(x - (S >> 1), y - (S >> 1)); rgba.push(v); }
        }
      }
      row.push({ off: Int16Array.from(off), rgba: Uint32Array.from(rgba) });
    }
    while (row.length < rotations) row.push(row[0]);
    out.push(row);
  }
  return out;
}

/** A small canvas with the class's symbol, for the legend and the pilot list. */
export function symbolCanvas(cls: Class, size = 22): HTMLCanvasElement {
  const dpr = window.devicePixelRatio || 1;
  const c = document.createElement('canvas');
  c.width = Math.round(size * dpr); c.height = Math.round(size * dpr);
  c.style.width = `${size}px`; c.style.height = `${size}px`;
  c.className = 'symbol';
  c.setAttribute('aria-hidden', 'true');
  const a = c.getContext('2d')!;
  const s = (size / 24) * dpr;
  a.setTransform(s, 0, 0, s, c.width / 2, c.height / 2);
  drawSymbol(a, cls);
  return c;
}
