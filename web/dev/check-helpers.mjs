// Runs the browser tests' page helpers against the dev mock (no lobby binary needed):
//   node dev/mock.mjs --port 8090 & node dev/check-helpers.mjs http://127.0.0.1:8090/
import assert from 'node:assert/strict';
import { launch, watchedPage } from '../tests/lib.mjs';
import { hoverAt, zoomAt, countText, serverRows, publishedStates, healthLines } from '../tests/page.mjs';

const url = process.argv[2] ?? 'http://127.0.0.1:8090/';
const b = await launch();
const w = await watchedPage(b);
const { page } = w;
await page.goto(url);
await page.waitForFunction(() => window.lobby.counts().online > 0);
const cs = await page.evaluate(() => { const l = window.lobby; return 'G-001'; });
const p = await page.evaluate((c) => window.lobby.pilot(c), cs);
console.log('count', await countText(page));
await zoomAt(page, p.lon, p.lat, 16);
const q = await page.evaluate((c) => window.lobby.pilot(c), cs);
console.log('hover', JSON.stringify(await hoverAt(page, q.lon, q.lat)));
console.log('hover off', JSON.stringify(await hoverAt(page, q.lon, q.lat, 40, 40)));
await page.goto(url + '#servers');
await page.waitForSelector('#servers tbody tr');
console.log(await serverRows(page));
await page.click('#servers th[data-key="players"]');
console.log((await serverRows(page)).map((r) => r.players));
await page.goto(url + '#backbone');
await page.waitForSelector('#published tbody tr');
console.log(await publishedStates(page), await healthLines(page));
assert.deepEqual(w.problems, []);
await w.close();
await b.close();
