// Benchmark: the page against a stream of 10,000 moving pilots. Prints the median and
// p95 time to apply one stream update (JSON.parse + state + redraw, from window.lobby,
// measured with performance.now() in the page) and the stream's bytes per second
// (Chromium's own count, CDP Network.dataReceived, for /api/pilots/stream).
//
//   LOBBY_BIN=/abs/lobby node bench/stream.mjs [--pilots 10000] [--seconds 30] [--hz 1] [--move 300]
//       the real relay, fed by `lobby load fg --pilots N --layout world --move KT`
//   node bench/stream.mjs --mock [--pilots 10000] [--seconds 30]
//       dev/mock.mjs instead (synthetic pilots, every one moving every second)
//   --view 'map?panel=pilots&c=64,-22&z=40'   open the page at this view (default: `map`,
//       the whole world, clustered); it also prints the count bubbles and pilots drawn
//       one by one in the last frame, and the open panel's own refresh time (after the
//       update is applied and drawn, not counted in the apply time).

import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { start, stopAll, launch } from '../tests/lib.mjs';

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(`--${n}`); return i >= 0 ? args[i + 1] : d; };
const MOCK = args.includes('--mock');
const N = Number(opt('pilots', 10000));
const SECONDS = Number(opt('seconds', 30));
const HZ = opt('hz', '1');
const MOVE = opt('move', '300');
const VIEW = opt('view', 'map'); // knots: every pilot moves, so every update carries them all
const BIN = process.env.LOBBY_BIN;
const here = dirname(fileURLToPath(import.meta.url));

const q = (a, p) => { const s = a.slice().sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const f1 = (x) => x.toFixed(1);

let dir, base, source, loadCmd;
try {
  if (MOCK) {
    const m = await start(process.execPath, [join(here, '..', 'dev', 'mock.mjs'), '--port', '0', '--pilots', String(N)], { expect: 1 });
    base = `http://${m.listeners[0].addr}/`;
    source = `dev/mock.mjs --pilots ${N}`;
  } else {
    if (!BIN) throw new Error('set LOBBY_BIN (or pass --mock)');
    dir = mkdtempSync(join(tmpdir(), 'lobby-bench-'));
    const conf = join(dir, 'bench.toml');
    writeFileSync(conf, `[relay]\nlisten = ["127.0.0.1:0"]\ntelnet = []\nmax_pilots = ${N + 1000}\n\n[master]\nlisten = ["127.0.0.1:0"]\n\n[http]\nlisten = ["127.0.0.1:0"]\n\n[dns]\nlisten = ["127.0.0.1:0"]\n\n[sim]\ncount = 0\n`);
    const web = (p) => p.listeners.find((l) => (l.part === 'web' && l.proto === 'http') || (l.part === 'http' && l.proto === 'tcp'));
    const up = await start(BIN, ['up', '--config', conf], { ready: (p) => web(p) && p.listeners.some((l) => l.part === 'relay') });
    base = `http://${web(up).addr}/`;
    const target = up.addr('relay', 'udp');
    const loadArgs = ['load', 'fg', '--target', target, '--pilots', String(N), '--hz', HZ, '--layout', 'world', '--range', '1', '--seconds', String(SECONDS + 40), '--warmup', '2', '--move', MOVE];
    loadCmd = `lobby ${loadArgs.join(' ')}`;
    await start(BIN, loadArgs, { ready: () => true, timeoutMs: 60000 });
    source = `lobby up (relay) + ${loadCmd}`;
    // Let the relay learn every pilot before the page connects.
    await new Promise((r) => setTimeout(r, 8000));
  }

  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let streamId = null, bytes = 0, counting = false;
  cdp.on('Network.requestWillBeSent', (e) => { if (e.request.url.endsWith('/api/pilots/stream')) streamId = e.requestId; });
  cdp.on('Network.dataReceived', (e) => { if (counting && e.requestId === streamId) bytes += e.encodedDataLength || e.dataLength; });
  await page.goto(`${base}#${VIEW}`);
  await page.waitForFunction(() => window.lobby.snapshots > 0, null, { timeout: 60000 });
  const before = await page.evaluate(() => ({ n: window.lobby.applyMs.length, chars: window.lobby.streamChars, online: window.lobby.counts().online }));
  counting = true;
  const t0 = Date.now();
  await page.waitForTimeout(SECONDS * 1000);
  counting = false;
  const secs = (Date.now() - t0) / 1000;
  const panelMs = [];
  // The open panel's refresh, sampled over a few updates (the page keeps only the last).
  // Only with a panel open; these updates come after the window (they are in the figures).
  for (let i = 0; i < 5 && (await page.evaluate(() => Boolean(window.lobby.panels?.().panel))); i++) {
    const n = await page.evaluate(() => window.lobby.streamEvents);
    await page.waitForFunction((m) => window.lobby.streamEvents > m, n, { timeout: 10000 }).catch(() => {});
    panelMs.push(await page.evaluate(() => window.lobby.lastPanelMs));
  }
  const after = await page.evaluate(() => ({ ms: window.lobby.applyMs, chars: window.lobby.streamChars, counts: window.lobby.counts(), split: window.lobby.lastSplitMs, events: window.lobby.streamEvents,
    splits: window.lobby.splitMs ?? null, clusters: window.lobby.clusters?.() ?? null, panel: window.lobby.panels?.().panel ?? null }));
  await browser.close();
  // applyMs keeps the last 600 (10 minutes): the window's are those after `before.n`
  // (which counted the snapshot).
  const updates = after.ms.slice(before.n);
  console.log(`source: ${source}`);
  console.log(`pilots online: ${after.counts.online} (at connect ${before.online}), shown ${after.counts.shown}`);
  console.log(`window: ${f1(secs)} s, ${updates.length} updates applied`);
  if (updates.length) console.log(`apply one update (parse + state + redraw): median ${f1(q(updates, 0.5))} ms, p95 ${f1(q(updates, 0.95))} ms, max ${f1(Math.max(...updates))} ms; last split ${JSON.stringify(Object.fromEntries(Object.entries(after.split).map(([k, v]) => [k, Number(v.toFixed(1))])))}`);
  if (after.splits && updates.length) {
    const sp = after.splits.slice(before.n);
    console.log(`split, median of the window's updates: ${['parse', 'apply', 'draw'].map((k) => `${k} ${f1(q(sp.map((x) => x[k]), 0.5))} ms`).join(', ')}`);
  }
  if (after.clusters) console.log(`view #${VIEW}: ${after.clusters.length} count bubbles holding ${after.clusters.reduce((a, c) => a + c.n, 0)} pilots; panel ${after.panel ?? 'none'}${after.panel ? `, its refresh after an update: median ${f1(q(panelMs, 0.5))} ms, max ${f1(Math.max(...panelMs))} ms` : ''}`);
  console.log(`stream: ${Math.round(bytes / secs)} B/s on the wire (CDP), ${Math.round((after.chars - before.chars) / secs)} chars/s of event data`);
  const v = VIEW === 'map' ? '' : ` --view '${VIEW}'`;
  console.log(`command: ${MOCK ? `node bench/stream.mjs --mock --pilots ${N} --seconds ${SECONDS}${v}` : `LOBBY_BIN=${BIN} node bench/stream.mjs --pilots ${N} --seconds ${SECONDS} --hz ${HZ}${v}`}`);
} finally {
  await stopAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
