// Exits 1 (saying which) when web/node_modules does not hold every package of
// package-lock.json at its locked version: a node_modules installed before a package
// was added or updated. `npm ci` brings it up to date. Reads files only (no network).
// Optional packages for other platforms (esbuild's, for example) are not installed here
// and not asked for.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const lock = JSON.parse(readFileSync(join(here, 'package-lock.json'), 'utf8'));
const wrong = [];
for (const [path, want] of Object.entries(lock.packages ?? {})) {
  if (path === '' || want.link) continue;
  let have = null;
  try { have = JSON.parse(readFileSync(join(here, path, 'package.json'), 'utf8')).version; } catch { /* not installed */ }
  if (have === null && want.optional) continue;
  if (have !== want.version) wrong.push(`${path.replace(/^node_modules\//, '')}: ${have ?? 'missing'}, locked ${want.version}`);
}
if (wrong.length) {
  console.error(`web/node_modules differs from web/package-lock.json (${wrong.length} package${wrong.length === 1 ? '' : 's'}): ${wrong.slice(0, 5).join('; ')}${wrong.length > 5 ? '; …' : ''}`);
  process.exit(1);
}
