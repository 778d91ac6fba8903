// Small DOM and formatting helpers. Everything from the network goes into the page as
// text (textContent), never as HTML: callsigns, server names and DNS data are
// chosen by strangers.

export type Child = Node | string | number | null | undefined | false;

export function h(tag: string, attrs: Record<string, string | number | boolean | null | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
  }
  return el;
}

export function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing`);
  return el;
}

/** "12 s", "4 min", "3 h 5 min", "2 d" ago, from two epoch-second times. */
export function ago(then: number | null | undefined, now: number): string {
  if (then === null || then === undefined) return '–';
  const s = Math.max(0, Math.round(now - then));
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return m % 60 ? `${hr} h ${m % 60} min ago` : `${hr} h ago`;
  return `${Math.floor(hr / 24)} d ago`;
}

export function utc(t: number | null | undefined): string {
  if (t === null || t === undefined) return '–';
  return new Date(t * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

const nf = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
export function int(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : nf.format(n);
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export interface Fetched<T> { status: number; body: T | null; absent: boolean; error: string | null }

/** GET a JSON document; a 404 means "this part does not run in this process". */
export async function getJson<T>(url: string): Promise<Fetched<T>> {
  try {
    const r = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' });
    let body: T | null = null;
    try { body = await r.json(); } catch { body = null; }
    return { status: r.status, body, absent: r.status === 404, error: r.ok || r.status === 503 ? null : `HTTP ${r.status}` };
  } catch (e) {
    return { status: 0, body: null, absent: false, error: String(e) };
  }
}

/** Calls `f` now and every `ms` while `active()` holds; one call at a time. */
export function poller(f: () => Promise<void>, ms: number, active: () => boolean): () => void {
  let busy = false;
  let timer = 0;
  const tick = async () => {
    window.clearTimeout(timer);
    if (!active()) return;
    if (!busy) {
      busy = true;
      try { await f(); } finally { busy = false; }
    }
    timer = window.setTimeout(tick, ms);
  };
  return () => { void tick(); };
}

/**
 * Puts `text` on the clipboard and says so on `btn`; where there is no clipboard (a
 * page over plain HTTP from another host is not a secure context) it selects `select`'s
 * text instead, so Ctrl-C or the phone's menu copies it.
 */
export async function copyText(btn: HTMLElement, text: string, select: Node | null, label = 'copy') {
  try {
    if (!navigator.clipboard || !window.isSecureContext) throw new Error('no clipboard');
    await navigator.clipboard.writeText(text);
    btn.textContent = 'copied';
  } catch {
    if (select) {
      const range = document.createRange();
      range.selectNodeContents(select);
      const sel = document.getSelection();
      sel?.removeAllRanges();
      sel?.addRange(range);
    }
    btn.textContent = 'selected';
  }
  window.setTimeout(() => { btn.textContent = label; }, 1500);
}

/** A JSON value kept in localStorage; `fallback` when absent, unreadable or blocked. */
export function stored<T>(key: string, fallback: T, valid: (v: unknown) => v is T): T {
  try {
    const raw = window.localStorage.getItem(key);
    if (raw === null) return fallback;
    const v: unknown = JSON.parse(raw);
    return valid(v) ? v : fallback;
  } catch {
    return fallback;
  }
}

export function store(key: string, value: unknown) {
  try { window.localStorage.setItem(key, JSON.stringify(value)); } catch { /* storage full or blocked: kept for this visit only */ }
}
