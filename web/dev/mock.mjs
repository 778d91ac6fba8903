// A development stand-in for lobby's HTTP listener: serves crates/lobby/web/* and the
// API of docs/API.md with synthetic data (pilots flying, a few Xash3D servers, relay
// links, a directory with one relay that goes up and down, DNS records).
//
//   node dev/mock.mjs [--port 8090] [--pilots 40] [--servers 7] [--speedup 1] [--absent relay,master,dns]
//
// --servers N beyond the 7 hand-made ones adds generated servers (to try the browser
// with thousands). A server's details (/api/servers/{addr}/details), its history (7
// days of samples, with gaps) and the list's heat maps (/api/list/heatmaps) are made up
// from the seed, so every run shows the same.
//
// Plain Node, no dependencies. Prints `listening web http 127.0.0.1:PORT`.

import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const PORT = Number(opt('port', 8090));
const N = Number(opt('pilots', 40));
const NSERVERS = Number(opt('servers', 7));
const SPEEDUP = Number(opt('speedup', 1));
const ABSENT = new Set(String(opt('absent', '')).split(',').filter(Boolean));
const WEB = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crates', 'lobby', 'web');

// Deterministic pseudo-random numbers (mulberry32), so every run looks the same.
let seed = 42;
const rnd = () => {
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const now = () => Math.floor(Date.now() / 1000);
const r5 = (x) => Math.round(x * 1e5) / 1e5;

const AIRPORTS = [[63.985, -22.605], [51.47, -0.454], [40.64, -73.78], [37.62, -122.38], [35.55, 139.78], [-33.94, 151.18], [1.36, 103.99], [25.25, 55.36], [48.35, 11.79], [-23.43, -46.47], [55.97, 37.41], [19.44, -99.07], [-26.14, 28.24], [49.19, -123.18], [64.82, -147.86], [21.32, -157.92]];
const MODELS = ['c172p', 'ufo', 'A320neo', '777-200ER', 'ec130b4', 'Citation-II', 'SenecaII', 'pa28-161', 'f16', 'dhc6', 'ask21', 'mp-nimitz', 'ZLT-NT'];
// What lobby's table (fgmp::aircraft) says of them.
const CLASS = { c172p: 'single_prop', ufo: 'other', A320neo: 'airliner', '777-200ER': 'airliner', ec130b4: 'helicopter', 'Citation-II': 'business_jet', SenecaII: 'twin_prop', 'pa28-161': 'single_prop', f16: 'military_jet', dhc6: 'twin_prop', ask21: 'glider', 'mp-nimitz': 'ship', 'ZLT-NT': 'airship' };
const FREQS = [118.3, 119.1, 121.5, 122.8, 123.45];
// A few airports for /api/airports (the real table has 45,437).
const AIRPORT_TABLE = [['BIKF', 'Keflavik International Airport', 'large', 63.985, -22.6056], ['BIRK', 'Reykjavik Airport', 'medium', 64.13, -21.9406], ['EGLL', 'London Heathrow Airport', 'large', 51.4706, -0.461941], ['KJFK', 'John F Kennedy International Airport', 'large', 40.6398, -73.7789], ['KSFO', 'San Francisco International Airport', 'large', 37.619, -122.375], ['RJAA', 'Narita International Airport', 'large', 35.7647, 140.386], ['YSSY', 'Sydney Kingsford Smith International Airport', 'large', -33.9461, 151.177], ['BIGJ', 'Gjogur Airport', 'small', 65.9953, -21.3269]];

const pilots = new Map();
let nextId = 1;
function newPilot(t) {
  const a = AIRPORTS[Math.floor(rnd() * AIRPORTS.length)];
  const m = MODELS[Math.floor(rnd() * MODELS.length)];
  const cs = N > 999 ? `P${String(nextId++).padStart(5, '0')}` : `${['TF', 'G', 'N', 'D', 'VH', 'JA'][nextId % 6]}-${String(nextId++).padStart(3, '0')}`;
  return {
    callsign: cs, model: `Aircraft/${m}/Models/${m}.xml`, aircraft: m, aircraft_name: m, class: CLASS[m],
    protocol: 2, atc: false, chat: null, frequency_mhz: rnd() < 0.3 ? FREQS[Math.floor(rnd() * FREQS.length)] : null,
    transponder: { code: 7000, altitude_ft: null, ident: false, mode: 5 }, livery: null, variant: 0, rate_hz: 10, lag_s: 0.1,
    lat: a[0] + (rnd() - 0.5) * 4, lon: a[1] + (rnd() - 0.5) * 4,
    alt_ft: Math.round(1000 + rnd() * 35000), heading: rnd() * 360, pitch: (rnd() - 0.5) * 10, roll: (rnd() - 0.5) * 20,
    ground_speed_kt: Math.round(80 + rnd() * 420), local: rnd() < 0.7, relay: null, online_since: t - Math.floor(rnd() * 3600), last_seen: t,
  };
}
const T0 = now();
for (let i = 0; i < N; i++) {
  const p = newPilot(T0);
  if (!p.local) p.relay = 'mpserver01';
  pilots.set(p.callsign, p);
}
const pub = (p) => ({ ...p, lat: r5(p.lat), lon: r5(p.lon), heading: Math.round(p.heading * 10) / 10 % 360 });

// One tick a second: everyone moves; now and then one leaves and another joins.
let snapId = 1;
let generated = now();
const clients = new Set();
function tick() {
  const t = now();
  generated = t;
  snapId++;
  const moved = [], joined = [], left = [];
  for (const p of pilots.values()) {
    p.heading = (p.heading + (rnd() - 0.5) * 4 + 360) % 360;
    const d = ((p.ground_speed_kt / 3600) * SPEEDUP) / 60;
    const h = (p.heading * Math.PI) / 180;
    p.lat = Math.max(-85, Math.min(85, p.lat + Math.cos(h) * d));
    p.lon = p.lon + (Math.sin(h) * d) / Math.max(0.1, Math.cos((p.lat * Math.PI) / 180));
    if (p.lon > 180) p.lon -= 360;
    if (p.lon < -180) p.lon += 360;
    p.last_seen = t;
    moved.push([p.callsign, r5(p.lat), r5(p.lon), Math.round(p.alt_ft), Math.round(p.heading) % 360, Math.round(p.ground_speed_kt)]);
  }
  if (N > 0 && snapId % 7 === 0) {
    const gone = [...pilots.keys()][Math.floor(rnd() * pilots.size)];
    pilots.delete(gone);
    left.push(gone);
    const p = newPilot(t);
    p.online_since = t;
    pilots.set(p.callsign, p);
    joined.push(pub(p));
  }
  const body = JSON.stringify({ generated_at: t, online: pilots.size, joined, moved: moved.filter((m) => !joined.some((j) => j.callsign === m[0])), left });
  for (const res of clients) res.write(`event: update\nid: ${snapId}\ndata: ${body}\n\n`);
  // Now and then a pilot says something.
  if (pilots.size && snapId % 5 === 0) {
    const p = [...pilots.values()][Math.floor(rnd() * pilots.size)];
    const line = { id: chatLines.length + 1, at: t, callsign: p.callsign, text: ['Hello', 'turning final', 'anyone near BIKF?', 'nice weather up here'][snapId % 4], lat: r5(p.lat), lon: r5(p.lon), frequency_mhz: p.frequency_mhz, atc: false };
    chatLines.push(line);
    for (const res of clients) res.write(`event: chat\nid: ${snapId}\ndata: ${JSON.stringify([line])}\n\n`);
  }
  // The directory: mpserver02 is down for 10 s out of every 30.
  const down = Math.floor((t - T0) / 10) % 3 === 2;
  if (down !== relay2Down) { relay2Down = down; relay2Since = t; serial++; }
}
setInterval(tick, 1000);
setInterval(() => { for (const res of clients) res.write(': keep-alive\n\n'); }, 15000);

const chatLines = [];
let relay2Down = false, relay2Since = T0, serial = 2026120101;

const GAMES = ['valve', 'valve', 'cstrike', 'valve', 'tfc', 'cstrike', 'dmc'];
const MAPS = ['crossfire', 'stalkyard', 'de_dust2', 'bounce', '2fort', 'cs_office', 'dmc_dm2'];
// 0-2: heartbeats only (no probe, no round trip); 3: heartbeat and curated; 4-6 curated,
// probed (5 is a GoldSrc server, protocol 48).
const SOURCES = [['heartbeat'], ['heartbeat'], ['heartbeat'], ['heartbeat', 'curated'], ['curated'], ['curated'], ['registered']];
const servers = GAMES.map((g, i) => ({
  address: i === 5 ? '[2001:db8::7]:27015' : `203.0.113.${7 + i}:${27015 + i}`,
  name: i === 3 ? null : `${['Crossfire 24/7', 'Stalkyard madness', 'Dust2 only', '', 'TFC classic', 'Office hours', 'DMC arena'][i]}`,
  gamedir: g, map: MAPS[i], players: [3, 12, 0, 7, 1, 16, 4][i], max: [16, 12, 20, 16, 24, 16, 8][i], bots: [0, 2, 0, 0, 4, 0, 1][i],
  password: i === 4, dedicated: i !== 6, os: ['linux', 'linux', 'windows', 'linux', 'macos', 'unknown', 'unknown'][i], nat: i === 2,
  version: ['0.21', '0.21', '0.20', '0.21', '0.19.2', '1.1.2.7', '0.21'][i], protocol: i === 5 ? 48 : 49, region: 255,
  registered_since: T0 - [120, 5000, 30, 86400 * 2, 700, 4000, 60][i], last_heartbeat: T0,
  sources: SOURCES[i], ping_ms: [null, null, null, 38.4, 121.7, 9.2, 64][i],
}));
const FIRST = ['Gordon', 'Barney', 'Alyx', 'Eli', 'Kleiner', 'Adrian', 'Gina', 'Colette', 'Otis', 'Walter', 'Rosenberg', 'Magnusson'];
for (let i = servers.length; i < NSERVERS; i++) {
  const g = GAMES[i % GAMES.length];
  const max = [8, 12, 16, 20, 24, 32][i % 6];
  const curated = rnd() < 0.4;
  servers.push({
    address: `198.51.${100 + Math.floor(i / 250) % 100}.${i % 250 + 1}:${27015 + (i % 7)}`,
    name: `${['[EU]', '[US]', '[RU]', '[BR]', '[AU]'][i % 5]} ${FIRST[i % FIRST.length]}'s ${MAPS[i % MAPS.length]} #${i}`,
    gamedir: g, map: MAPS[(i * 3) % MAPS.length], players: Math.floor(rnd() * (max + 1)), max, bots: rnd() < 0.2 ? 2 : 0,
    password: rnd() < 0.1, dedicated: true, os: 'linux', nat: rnd() < 0.1, version: '0.21', protocol: rnd() < 0.15 ? 48 : 49, region: 255,
    registered_since: T0 - Math.floor(rnd() * 86400 * 3), last_heartbeat: T0,
    sources: curated ? ['curated'] : ['heartbeat'], ping_ms: curated ? Math.round(rnd() * 2000) / 10 : null,
  });
}

/** Made-up answers to a live query of `s`: players (none when empty or GoldSrc with a password), rules. */
function details(s, i) {
  const t = now();
  const humans = s.players;
  let players = null, note = null;
  if (humans === 0) note = 'the server sends no player list while nobody is connected (Xash3D answers A2S_PLAYER only with a player on)';
  else if (s.password && s.protocol === 49) note = 'the server does not expose its player list (sv_expose_player_list 0)';
  else players = Array.from({ length: humans + s.bots }, (_, k) => ({
    name: k >= humans ? `Bot ${k - humans + 1}` : `${FIRST[(i * 5 + k) % FIRST.length]}${k % 3 === 1 ? ' ^1<3' : ''}`,
    frags: (i * 7 + k * 13) % 31 - (k % 4 === 3 ? 2 : 0),
    seconds: ((i + 1) * (k + 3) * 97) % 5400 + 12.5,
  }));
  const rules = s.protocol === 48 && i % 2 === 1 ? null : [
    ['mp_timelimit', String(20 + (i % 3) * 10)], ['mp_fraglimit', '50'], ['mp_friendlyfire', i % 2 ? '1' : '0'],
    ['sv_gravity', '800'], ['sv_maxspeed', '320'], ['sv_contact', `ops${i}@example.org`], ['coop', '0'], ['deathmatch', '1'],
    ['mp_footsteps', '1'], ['sv_password', s.password ? '1' : '0'],
  ];
  return {
    address: s.address, queried_at: t, ping_ms: s.nat ? null : Math.round((s.ping_ms ?? 20 + (i % 9) * 7) + rnd() * 5),
    protocol: s.protocol, dialect: s.protocol === 48 ? 'source' : 'xash49',
    players, players_note: note, rules, rules_note: rules ? null : 'the server did not answer A2S_RULES',
  };
}

/** Samples every 300 s over the last 7 days, with the server down for stretches (server i: i × 3 % of the time). */
function history(s, i, since) {
  const t = now();
  const every = 300;
  const samples = [];
  const first = Math.max(since, T0 - 8 * 86400 + i * 3600 * 20, t - 8 * 86400);
  for (let at = Math.ceil(first / every) * every; at <= t; at += every) {
    const slot = Math.floor(at / every);
    if ((slot * 2654435761 >>> 0) % 100 < i * 3) continue; // down
    const hour = new Date(at * 1000).getUTCHours();
    const busy = Math.max(0, Math.sin(((hour - 14) / 24) * 2 * Math.PI) * 0.5 + 0.5);
    samples.push({ time: at, players: Math.min(s.max, Math.round(busy * s.max * 0.8 + ((slot * 7) % 3))), max: s.max, map: s.map });
  }
  return { name: s.name, first_seen: T0 - 8 * 86400 + i * 3600 * 20, last_seen: t, samples: samples.filter((x) => x.time >= since) };
}

/** Medians of players by UTC hour and weekday per gamedir, with gaps where nothing was sampled. */
function heatmaps() {
  const games = [...new Set(servers.map((s) => s.gamedir))].sort();
  return {
    generated_at: now(), hour_days: 14, weekday_weeks: 6,
    gamedirs: games.map((g, gi) => {
      const size = servers.filter((s) => s.gamedir === g).reduce((a, s) => a + s.max, 0) / 3;
      const hours = Array.from({ length: 24 }, (_, hr) => {
        if (g === 'dmc' && hr % 5 === 2) return null;
        const busy = Math.max(0, Math.sin(((hr - 14 - gi) / 24) * 2 * Math.PI) * 0.5 + 0.5);
        return Math.round(busy * size * 2) / 2;
      });
      const weekdays = Array.from({ length: 7 }, (_, d) => (g === 'dmc' && d === 1 ? null : Math.round(size * (d >= 4 ? 0.8 : 0.45) * 2 + gi) / 2));
      return { gamedir: g, hours, weekdays };
    }),
  };
}

function snapshotBody(filter = () => true) {
  const all = [...pilots.values()];
  const list = all.filter(filter).sort((a, b) => a.online_since - b.online_since || (a.callsign < b.callsign ? -1 : 1)).map(pub);
  return { generated_at: generated, online: all.length, pilots: list };
}

// The page's distance (src/geo.ts: the mean Earth radius, as lobby's Rust side): the
// mock is plain JavaScript and cannot import the TypeScript source.
function nm(lat1, lon1, lat2, lon2) {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * (6_371_008.8 / 1852) * Math.asin(Math.min(1, Math.sqrt(a)));
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.txt': 'text/plain; charset=utf-8' };
const json = (res, code, body) => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const p = url.pathname;
  const q = url.searchParams;
  if (['/', '/app.js', '/app.css', '/land.json', '/licenses.txt'].includes(p)) {
    const f = p === '/' ? 'index.html' : p.slice(1);
    try {
      const body = await readFile(join(WEB, f));
      res.writeHead(200, { 'content-type': TYPES[f.slice(f.lastIndexOf('.'))] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(body);
    } catch { json(res, 404, { error: `${f} not built (npm run build)` }); }
    return;
  }
  const part = p.startsWith('/api/pilots') ? 'relay' : p.startsWith('/api/servers') || p === '/api/list/heatmaps' ? 'master' : p === '/api/dns' ? 'dns' : p === '/api/relays' ? 'relays' : null;
  if (part && (ABSENT.has(part) || (part === 'relays' && ABSENT.has('relay') && ABSENT.has('dns')))) return json(res, 404, { error: `no ${part} runs in this process` });
  if (p === '/healthz') return json(res, 200, { status: 'ok' });
  if (p === '/readyz') {
    const parts = ['relay', 'master', 'dns'].filter((x) => !ABSENT.has(x)).map((x) => ({ part: x, ready: true, detail: null }));
    return json(res, 200, { ready: true, parts });
  }
  if (p === '/api/pilots') {
    const cs = q.get('callsign');
    const near = q.get('near');
    let f = () => true;
    if (near) {
      const [la, lo, r] = near.split(',').map(Number);
      if (![la, lo, r].every(Number.isFinite)) return json(res, 400, { error: 'near must be lat,lon,nm' });
      f = (x) => nm(la, lo, x.lat, x.lon) <= r;
    }
    if (cs !== null) { const g = f; f = (x) => g(x) && x.callsign === cs; }
    return json(res, 200, snapshotBody(f));
  }
  if (p === '/api/pilots/stream') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(`event: snapshot\nid: ${snapId}\ndata: ${JSON.stringify(snapshotBody())}\n\n`);
    clients.add(res);
    req.on('close', () => clients.delete(res));
    return;
  }
  if (p === '/api/servers') {
    let list = servers.slice();
    for (const k of ['gamedir', 'map']) if (q.has(k)) list = list.filter((s) => s[k] === q.get(k));
    for (const k of ['nat', 'password', 'dedicated']) if (q.has(k)) list = list.filter((s) => Number(s[k]) === Number(q.get(k)));
    if (q.has('full')) list = list.filter((s) => (s.players >= s.max) === (q.get('full') === '1'));
    if (q.has('empty')) list = list.filter((s) => (s.players === 0) === (q.get('empty') === '1'));
    list.sort((a, b) => (a.address < b.address ? -1 : 1));
    return json(res, 200, { generated_at: generated, total: servers.length, servers: list });
  }
  const one = p.match(/^\/api\/servers\/([^/]+)\/(details|history)$/);
  if (one) {
    const addr = decodeURIComponent(one[1]);
    const i = servers.findIndex((s) => s.address === addr);
    if (one[2] === 'details') {
      if (i < 0) return json(res, 404, { error: `${addr} is not listed` });
      // A slow live query, as the master's is.
      return setTimeout(() => json(res, 200, details(servers[i], i)), 150 + (i % 4) * 100);
    }
    if (ABSENT.has('history')) return json(res, 404, { error: 'no flight log in this process ([history] database_url)' });
    if (i < 0) return json(res, 404, { error: `${addr} was never seen` });
    const since = q.has('since') ? Number(q.get('since')) : now() - 86400;
    if (!Number.isInteger(since)) return json(res, 400, { error: 'since must be an integer' });
    return json(res, 200, history(servers[i], i, since));
  }
  if (p === '/api/list/heatmaps') return json(res, 200, heatmaps());
  if (p === '/api/chat') {
    let lines = chatLines.slice();
    if (q.has('callsign')) lines = lines.filter((l) => l.callsign === q.get('callsign'));
    return json(res, 200, { generated_at: generated, kept: lines.length, lines: lines.slice(-Number(q.get('limit') ?? 100)) });
  }
  if (p === '/api/atc') {
    return json(res, 200, { generated_at: generated, stations: [{ callsign: 'BIKF_TW', airport: 'BIKF', position: 'TW', frequency_mhz: 118.3, model: 'OpenRadar', lat: 63.985, lon: -22.6056, online_since: T0 }] });
  }
  if (p === '/api/airports') {
    const [w, so, e, n] = (q.get('bbox') ?? '-180,-90,180,90').split(',').map(Number);
    const kinds = { large: ['large'], medium: ['large', 'medium'] }[q.get('min')] ?? ['large', 'medium', 'small'];
    const list = AIRPORT_TABLE.filter((a) => kinds.includes(a[2]) && a[3] >= so && a[3] <= n && (w <= e ? a[4] >= w && a[4] <= e : a[4] >= w || a[4] <= e))
      .map(([ident, name, kind, lat, lon]) => ({ ident, name, kind, lat, lon, elevation_ft: null, country: null }));
    return json(res, 200, { airports: list, truncated: false });
  }
  if (p === '/api/relays') {
    return json(res, 200, {
      generated_at: generated,
      relay: ABSENT.has('relay') ? null : {
        name: 'lobby', hub: false, links: [
          { kind: 'relay', name: 'mpserver01.example.org:5000', address: '198.51.100.1:5000', datagrams_out: 1200 + snapId * 10, bytes_out: 1080000 + snapId * 9000, datagrams_in: 800 + snapId * 7, bytes_in: 720000 + snapId * 6300, last_in: generated - 1 },
          { kind: 'crossfeed', name: 'tracker.example.org:5002', address: null, datagrams_out: 300, bytes_out: 270000, datagrams_in: 0, bytes_in: 0, last_in: null },
        ],
      },
      published: ABSENT.has('dns') ? [] : [
        { name: 'mpserver01', host: 'mpserver01.fg.example.org', port: 5000, up: true, rtt_ms: 12.3, since: T0 - 3600 },
        { name: 'mpserver02', host: 'mpserver02.fg.example.org', port: 5000, up: !relay2Down, rtt_ms: relay2Down ? 31.7 : 30.2, since: relay2Since },
      ],
    });
  }
  if (p === '/api/dns') {
    const z = 'fg.example.org.';
    return json(res, 200, {
      generated_at: generated, zone: z, serial,
      records: [
        { name: `_fgms._udp.${z}`, type: 'SRV', ttl: 60, data: `10 10 5000 mpserver01.${z}` },
        { name: `_fgms._udp.${z}`, type: 'SRV', ttl: 60, data: `10 10 ${relay2Down ? 0 : 5000} mpserver02.${z}` },
        { name: `mpserver01.${z}`, type: 'A', ttl: 60, data: '198.51.100.1' },
        { name: `mpserver01.${z}`, type: 'TXT', ttl: 60, data: '"flightgear-mpserver=eyJuYW1lIjoibXBzZXJ2ZXIwMSJ9"' },
        { name: `mpserver02.${z}`, type: 'A', ttl: 60, data: '198.51.100.2' },
      ],
    });
  }
  json(res, 404, { error: 'not found' });
});
server.listen(PORT, '127.0.0.1', () => {
  console.log(`listening web http 127.0.0.1:${server.address().port}`);
});
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(0));
