// The pilot stream (/api/pilots/stream, server-sent events): its snapshot and updates
// applied to the map's state, timed (parse, apply, redraw) for the tests and the
// benchmark; its chat lines handed on; reconnection when the browser gives up.

import { $, getJson } from './util';
import { applySnapshot, applyUpdate, type ChatLine, type MapState, type Snapshot, type Update } from './mapstate';

/** What the map does around each event. */
export interface StreamHandlers {
  /** After a snapshot or update is applied, timed with it: draw, hover. */
  redraw(): void;
  /** Then, untimed: the counts, the details, following. */
  applied(): void;
  /** Then the open panel, timed on its own (`panelMs`). */
  panels(): void;
  /** A snapshot arrived (the stream connected or reconnected). */
  snapshot(): void;
  /** Chat lines arrived. */
  chat(lines: ChatLine[]): void;
}

/** The last this many timings are kept. */
const KEEP = 600;

function status(text: string, cls: string) {
  const el = $('stream-status');
  el.textContent = text;
  el.className = `status ${cls}`;
}

/** Opens the stream (closing one already open) and applies what it sends to `s`. */
export function connect(s: MapState, on: StreamHandlers) {
  const st = s.stream;
  st.source?.close();
  const es = new EventSource('/api/pilots/stream');
  st.source = es;
  es.onopen = () => status('live', 'live');
  const handle = <T>(apply: (data: T) => void) => (e: MessageEvent<string>) => {
    const t0 = performance.now();
    st.chars += e.data.length;
    st.events++;
    const data = JSON.parse(e.data) as T;
    const t1 = performance.now();
    apply(data);
    const t2 = performance.now();
    on.redraw();
    const t3 = performance.now();
    const ms = t3 - t0;
    st.lastSplit = { parse: t1 - t0, apply: t2 - t1, draw: t3 - t2 };
    st.splits.push(st.lastSplit);
    if (st.splits.length > KEEP) st.splits.splice(0, st.splits.length - KEEP);
    st.lastApplyMs = ms;
    st.applyMs.push(ms);
    if (st.applyMs.length > KEEP) st.applyMs.splice(0, st.applyMs.length - KEEP);
    on.applied();
    // The open panel (its list sorted and drawn again), timed on its own.
    const t4 = performance.now();
    on.panels();
    st.panelMs = performance.now() - t4;
  };
  es.addEventListener('snapshot', handle<Snapshot>((snap) => { st.snapshots++; applySnapshot(s, snap); on.snapshot(); }));
  es.addEventListener('update', handle<Update>((u) => applyUpdate(s, u)));
  es.addEventListener('chat', (e: MessageEvent<string>) => {
    st.chars += e.data.length;
    st.events++;
    let lines: ChatLine[];
    try { lines = JSON.parse(e.data); } catch { return; }
    if (!Array.isArray(lines)) return;
    on.chat(lines);
  });
  es.onerror = async () => {
    if (es.readyState !== EventSource.CLOSED) { status('reconnecting', 'bad'); return; }
    // The browser gave up (an HTTP error): find out why, then try again later.
    const r = await getJson<unknown>('/api/pilots?callsign=');
    status(r.absent ? 'no relay runs here' : 'disconnected, retrying', 'bad');
    window.setTimeout(() => connect(s, on), r.absent ? 30000 : 3000);
  };
}
