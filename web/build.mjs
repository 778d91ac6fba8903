// Builds the page into crates/lobby/web/, which `cargo build` embeds (so a plain
// cargo build needs no Node): index.html, app.js, app.css, land.json, land-50m.json, licenses.txt,
// and a .gz copy of each.
// Run with `npm run build` after `npm ci`; the output is committed.

import { build } from 'esbuild';
import { readFileSync, writeFileSync, mkdirSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'crates', 'lobby', 'web');
mkdirSync(out, { recursive: true });

const js = await build({
  entryPoints: [join(here, 'src', 'main.ts')],
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  outfile: join(out, 'app.js'),
  metafile: true,
  legalComments: 'none', // every licence is in licenses.txt
  logLevel: 'warning',
});
await build({
  entryPoints: [join(here, 'src', 'style.css')],
  bundle: true,
  minify: true,
  outfile: join(out, 'app.css'),
  logLevel: 'warning',
});
writeFileSync(join(out, 'index.html'), readFileSync(join(here, 'src', 'index.html')));

// The world: Natural Earth 1:110m land (public domain), as world-atlas ships it.
const land = JSON.parse(readFileSync(join(here, 'node_modules', 'world-atlas', 'land-110m.json'), 'utf8'));
writeFileSync(join(out, 'land.json'), JSON.stringify(land));
// And 1:50m, which the map reads only when zoomed in (coasts near an airport).
const land50 = JSON.parse(readFileSync(join(here, 'node_modules', 'world-atlas', 'land-50m.json'), 'utf8'));
writeFileSync(join(out, 'land-50m.json'), JSON.stringify(land50));

// Licences of every npm package whose code or data is in the output.
const pkgs = new Set(['world-atlas']);
for (const input of Object.keys(js.metafile.inputs)) {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (m) pkgs.add(m[1]);
}
let text = 'Third-party software in lobby\'s web page (crates/lobby/web/), built from web/ by\n' +
  'web/build.mjs. Each package came from the npm registry at the version named.\n' +
  'land.json and land-50m.json are Natural Earth\'s 1:110m and 1:50m land (public domain),\n' +
  'as world-atlas converts them.\n';
for (const name of [...pkgs].sort()) {
  const dir = join(here, 'node_modules', name);
  const pj = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const files = readdirSync(dir).filter((f) => /^(LICEN[CS]E|COPYING|NOTICE)/i.test(f)).sort();
  text += `\n${'='.repeat(78)}\n${pj.name} ${pj.version} (${pj.license ?? 'see below'})\n${pj.homepage ?? ''}\n${'='.repeat(78)}\n\n`;
  if (!files.length) throw new Error(`${name}: no licence file`);
  for (const f of files) text += readFileSync(join(dir, f), 'utf8').trim() + '\n';
}
writeFileSync(join(out, 'licenses.txt'), text);

// A gzip copy of each file, served to clients that ask for it (the binary embeds
// both, so it compresses nothing at run time; gzip's header holds no time here).
for (const f of ['index.html', 'app.js', 'app.css', 'land.json', 'land-50m.json', 'licenses.txt']) {
  writeFileSync(join(out, `${f}.gz`), gzipSync(readFileSync(join(out, f)), { level: 9 }));
}

const size = (f) => readFileSync(join(out, f)).length;
console.log(`built ${out}: app.js ${size('app.js')} B, app.css ${size('app.css')} B, land.json ${size('land.json')} B, index.html ${size('index.html')} B; licences of ${[...pkgs].sort().join(', ')}`);
if (!existsSync(join(out, 'app.js'))) process.exit(1);
