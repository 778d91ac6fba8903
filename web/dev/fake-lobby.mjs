#!/usr/bin/env node
// A stand-in for the lobby binary, only to exercise tests/browser.test.mjs before the
// real HTTP API exists: `LOBBY_BIN=$PWD/dev/fake-lobby.mjs npm test`. It speaks JSON
// over UDP between its own processes (not FlightGear or Xash3D), and serves the page and
// the API shapes of docs/API.md. It proves nothing about lobby; the real binary does.
//   fake-lobby.mjs relay --listen 127.0.0.1:0 --telnet off
//   fake-lobby.mjs up --config FILE          ([relay] player_expiry, [[directory.relay]] probe)
//   fake-lobby.mjs sim --master ADDR --count N --gamedir G
//   fake-lobby.mjs fly --relay ADDR --callsign CS --lat --lon --alt-ft --heading --speed-kt [--hz]
import dgram from 'node:dgram';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [cmd, ...rest] = process.argv.slice(2);
const opt = (n, d) => { const i = rest.indexOf(`--${n}`); return i >= 0 ? rest[i + 1] : d; };
const say = (s) => process.stdout.write(s + '\n');
const now = () => Math.floor(Date.now() / 1000);
const hp = (a) => { const i = a.lastIndexOf(':'); return [a.slice(0, i), Number(a.slice(i + 1))]; };
const bind = (port = 0) => new Promise((res) => { const s = dgram.createSocket('udp4'); s.bind(port, '127.0.0.1', () => res(s)); });
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(0));

if (cmd === 'relay') {
  const s = await bind();
  s.on('message', (m, r) => { if (String(m) === 'ping') s.send('pong', r.port, r.address); });
  say(`listening relay udp 127.0.0.1:${s.address().port}`);
} else if (cmd === 'fly') {
  const s = await bind();
  const [h, port] = hp(opt('relay'));
  let lat = Number(opt('lat')), lon = Number(opt('lon'));
  const hd = Number(opt('heading')), kt = Number(opt('speed-kt')), hz = Number(opt('hz', 10));
  const cs = opt('callsign');
  let last = Date.now();
  setInterval(() => {
    const t = Date.now(), d = ((kt / 3600) * (t - last) / 1000) / 60; last = t;
    lat += Math.cos(hd * Math.PI / 180) * d; lon += Math.sin(hd * Math.PI / 180) * d / Math.cos(lat * Math.PI / 180);
    s.send(JSON.stringify({ cs, lat, lon, alt: Number(opt('alt-ft')), hd, kt, model: opt('model', 'Aircraft/c172p/Models/c172p.xml') }), port, h);
  }, 1000 / hz);
  say(`flying ${cs} to ${opt('relay')}`);
} else if (cmd === 'sim') {
  const [h, port] = hp(opt('master'));
  const n = Number(opt('count', 1)), g = opt('gamedir', 'valve'), seed = Number(opt('seed', 1));
  for (let i = 0; i < n; i++) {
    const s = await bind();
    const info = { gamedir: g, map: ['crossfire', 'bounce', 'datacore', 'de_dust2', 'cs_italy'][(i + seed) % 5], players: (i * 3 + seed) % 9, max: 16, name: i === 1 ? '' : `Sim ${g} #${i + 1}` };
    const beat = () => s.send(JSON.stringify(info), port, h);
    beat(); setInterval(beat, 1000);
    say(`listening sim udp 127.0.0.1:${s.address().port}`);
  }
} else if (cmd === 'up') {
  const conf = readFileSync(opt('config'), 'utf8');
  const expiry = Number(conf.match(/player_expiry\s*=\s*([\d.]+)/)?.[1] ?? 10);
  const probes = [...conf.matchAll(/\[\[directory\.relay\]\][\s\S]*?\nname\s*=\s*"([^"]+)"[\s\S]*?\nprobe\s*=\s*"([^"]+)"/g)].map((m) => ({ name: m[1], addr: m[2], up: false, since: null, rtt: null, fails: 0 }));
  const relay = await bind(), master = await bind(), dns = await bind(), prober = await bind();
  const pilots = new Map(), servers = new Map();
  let serial = 2026120100, snap = 1;
  relay.on('message', (m) => {
    const p = JSON.parse(String(m)), t = now();
    const old = pilots.get(p.cs);
    pilots.set(p.cs, { ...p, since: old?.since ?? t, seen: Date.now() });
  });
  master.on('message', (m, r) => {
    const a = `${r.address}:${r.port}`, t = now();
    servers.set(a, { ...JSON.parse(String(m)), address: a, since: servers.get(a)?.since ?? t, beat: t });
  });
  prober.on('message', (m, r) => { const p = probes.find((x) => x.addr === `${r.address}:${r.port}`); if (p) { p.fails = 0; if (!p.up) { p.up = true; p.since = now(); serial++; } p.rtt = 0.3; } });
  setInterval(() => { for (const p of probes) { const [h, port] = hp(p.addr); p.fails++; if (p.fails > 2 && p.up) { p.up = false; p.since = now(); serial++; } prober.send('ping', port, h); } }, 300);
  const api = (p) => ({ callsign: p.cs, model: p.model, aircraft: p.model.split('/').pop().replace(/\.xml$/, ''), lat: Math.round(p.lat * 1e5) / 1e5, lon: Math.round(p.lon * 1e5) / 1e5, alt_ft: p.alt, heading: p.hd, pitch: 1.5, roll: -0.5, ground_speed_kt: p.kt, local: true, relay: null, online_since: p.since, last_seen: Math.floor(p.seen / 1000) });
  const clients = new Set();
  let prev = new Map();
  setInterval(() => {
    for (const [cs, p] of pilots) if (Date.now() - p.seen > expiry * 1000) pilots.delete(cs);
    const cur = new Map([...pilots].map(([cs, p]) => [cs, api(p)]));
    const joined = [...cur.values()].filter((p) => !prev.has(p.callsign));
    const left = [...prev.keys()].filter((cs) => !cur.has(cs));
    const moved = [...cur.values()].filter((p) => prev.has(p.callsign) && (prev.get(p.callsign).lat !== p.lat || prev.get(p.callsign).lon !== p.lon)).map((p) => [p.callsign, p.lat, p.lon, Math.round(p.alt_ft), Math.round(p.heading), Math.round(p.ground_speed_kt)]);
    prev = cur; snap++;
    if (joined.length || left.length || moved.length) for (const res of clients) res.write(`event: update\nid: ${snap}\ndata: ${JSON.stringify({ generated_at: now(), online: cur.size, joined, moved, left })}\n\n`);
  }, 1000);
  const WEB = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crates', 'lobby', 'web');
  const json = (res, c, b) => { res.writeHead(c, { 'content-type': 'application/json' }); res.end(JSON.stringify(b)); };
  const srv = http.createServer(async (req, res) => {
    const u = new URL(req.url, 'http://x'), p = u.pathname;
    if (['/', '/app.js', '/app.css', '/land.json', '/licenses.txt'].includes(p)) {
      const f = p === '/' ? 'index.html' : p.slice(1);
      res.writeHead(200, { 'content-type': { html: 'text/html', js: 'text/javascript', css: 'text/css', json: 'application/json', txt: 'text/plain' }[f.split('.').pop()] });
      return res.end(await readFile(join(WEB, f)));
    }
    const list = () => [...prev.values()].filter((x) => !u.searchParams.has('callsign') || x.callsign === u.searchParams.get('callsign'));
    if (p === '/api/pilots') return json(res, 200, { generated_at: now(), online: prev.size, pilots: list() });
    if (p === '/api/pilots/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: snapshot\nid: ${snap}\ndata: ${JSON.stringify({ generated_at: now(), online: prev.size, pilots: [...prev.values()] })}\n\n`);
      clients.add(res); req.on('close', () => clients.delete(res)); return;
    }
    if (p === '/api/servers') return json(res, 200, { generated_at: now(), total: servers.size, servers: [...servers.values()].sort((a, b) => (a.address < b.address ? -1 : 1)).map((s) => ({ address: s.address, name: s.name || null, gamedir: s.gamedir, map: s.map, players: s.players, max: s.max, bots: 0, password: false, dedicated: true, os: 'linux', nat: false, version: '0.21', protocol: 49, region: 255, registered_since: s.since, last_heartbeat: s.beat })) });
    if (p === '/api/relays') return json(res, 200, { generated_at: now(), relay: { name: 'lobby', hub: false, links: [] }, published: [{ name: 'lobby', host: 'relay.fg.lobby.test', port: relay.address().port, up: true, rtt_ms: 0.1, since: now() }, ...probes.map((x) => ({ name: x.name, host: `${x.name}.fg.lobby.test`, port: hp(x.addr)[1], up: x.up, rtt_ms: x.rtt, since: x.since }))] });
    if (p === '/api/dns') return json(res, 200, { generated_at: now(), zone: 'fg.lobby.test.', serial, records: [{ name: '_fgms._udp.fg.lobby.test.', type: 'SRV', ttl: 60, data: `10 20 ${relay.address().port} relay.fg.lobby.test.` }, ...probes.map((x) => ({ name: '_fgms._udp.fg.lobby.test.', type: 'SRV', ttl: 60, data: `10 20 ${x.up ? hp(x.addr)[1] : 0} ${x.name}.fg.lobby.test.` }))] });
    if (p === '/readyz') { const ready = probes.every((x) => x.since !== null); return json(res, ready ? 200 : 503, { ready, parts: [{ part: 'relay', ready: true, detail: null }, { part: 'master', ready: true, detail: null }, { part: 'dns', ready, detail: ready ? null : 'no relay probed yet' }] }); }
    json(res, 404, { error: 'not found' });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  say(`listening relay udp 127.0.0.1:${relay.address().port}`);
  say(`listening master udp 127.0.0.1:${master.address().port}`);
  say(`listening dns udp 127.0.0.1:${dns.address().port}`);
  say(`listening http tcp 127.0.0.1:${srv.address().port}`);
  for (let i = 0; i < 3; i++) {
    const s = await bind();
    const info = { gamedir: 'valve', map: ['crossfire', 'stalkyard', 'boot_camp'][i], players: [2, 7, 0][i], max: 16, name: `lobby sim #${i + 1}` };
    const beat = () => s.send(JSON.stringify(info), master.address().port, '127.0.0.1');
    beat(); setInterval(beat, 1000);
    say(`listening sim udp 127.0.0.1:${s.address().port}`);
  }
} else { console.error(`fake-lobby: unknown command ${cmd}`); process.exit(2); }
