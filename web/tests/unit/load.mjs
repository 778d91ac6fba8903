// Loads a module of web/src for the unit tests: esbuild bundles the TypeScript (and the
// npm packages it imports) into one ES module in a temporary directory, which is
// imported and removed. Node 20 runs no TypeScript itself.

import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** The module `web/src/<name>.ts`, compiled. */
export async function load(name) {
  const dir = mkdtempSync(join(tmpdir(), 'lobby-web-unit-'));
  const out = join(dir, `${name}.mjs`);
  try {
    await build({
      entryPoints: [join(SRC, `${name}.ts`)],
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: ['node20'],
      outfile: out,
      logLevel: 'warning',
    });
    return await import(pathToFileURL(out).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
