// What a user sees, read through Playwright: the map's tooltip under the mouse, the
// server table's cells, the backbone's status text. window.lobby only says where to
// look (the screen position of a longitude/latitude) and what the page holds.

/** Page coordinates of (lon, lat) on the map canvas at the current zoom. */
export async function mapPoint(page, lon, lat) {
  const [x, y] = await page.evaluate(([lo, la]) => window.lobby.project(lo, la), [lon, lat]);
  const box = await page.locator('#map').boundingBox();
  return { x: box.x + x, y: box.y + y, inside: x >= 0 && y >= 0 && x <= box.width && y <= box.height };
}

/** Moves the mouse to (lon, lat) and returns the tooltip's text ('' when none shows). */
export async function hoverAt(page, lon, lat, dx = 0, dy = 0) {
  const p = await mapPoint(page, lon, lat);
  // Two moves, so a mousemove fires even when the mouse was already there.
  await page.mouse.move(p.x + dx + 3, p.y + dy + 3);
  await page.mouse.move(p.x + dx, p.y + dy);
  await page.waitForTimeout(50);
  const tip = page.locator('#tooltip');
  return (await tip.isVisible()) ? (await tip.innerText()).trim() : '';
}

/** Zooms the map in around (lon, lat) with the mouse wheel until the scale is >= k. */
export async function zoomAt(page, lon, lat, k) {
  for (let i = 0; i < 40; i++) {
    const z = await page.evaluate(() => window.lobby.zoom.k);
    if (z >= k) return z;
    const p = await mapPoint(page, lon, lat);
    await page.mouse.move(p.x, p.y);
    await page.mouse.wheel(0, -300);
    await page.waitForTimeout(60);
  }
  throw new Error(`map never zoomed to ${k}`);
}

export async function countText(page) {
  return (await page.locator('#pilot-count').innerText()).trim();
}

/** The server table as the user reads it: one object per row, keyed by column. */
export async function serverRows(page) {
  return page.$$eval('#servers tbody tr[data-address]', (trs) => trs.map((tr) => {
    const cell = (c) => tr.querySelector(`td.${c}`)?.textContent?.trim() ?? '';
    return {
      name: cell('name'), map: cell('map'), players: cell('players'), ping: cell('ping'), gamedir: cell('gamedir'),
      nat: cell('nat'), version: cell('version'), since: cell('since'),
      address: tr.querySelector('td.address .addr')?.textContent?.trim() ?? '',
      favourite: tr.querySelector('td.fav button.star')?.getAttribute('aria-pressed') === 'true',
      gone: tr.classList.contains('gone'),
    };
  }));
}

/** The open server's details row as the user reads it. */
export async function serverDetails(page, addr) {
  const row = page.locator(`#servers tr.detail[data-history="${addr}"]`);
  return row.evaluate((tr) => {
    const dd = Object.fromEntries([...tr.querySelectorAll('.detail-facts dt')].map((dt) => [dt.textContent.trim(), dt.nextElementSibling?.textContent?.trim() ?? '']));
    return {
      facts: dd,
      join: tr.querySelector('code.join')?.textContent?.trim() ?? '',
      players: [...tr.querySelectorAll('table.players tbody tr')].map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())),
      playersNote: tr.querySelector('.detail-players .note')?.textContent?.trim() ?? null,
      rules: [...tr.querySelectorAll('table.rules tr')].map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())),
      rulesTitle: tr.querySelector('.detail-rules summary')?.textContent?.trim() ?? null,
    };
  });
}

/** A heat map as drawn: per cell its label, text and whether it holds a value. */
export async function heatmapCells(page, gamedir) {
  return page.$$eval(`#heatmaps .heatmap[data-gamedir="${gamedir}"] .hm-grid`, (grids) => grids.map((g) => [...g.querySelectorAll('.hm-cell')].map((c) => ({
    label: c.querySelector('.hm-label')?.textContent ?? '', value: c.querySelector('.hm-value')?.textContent ?? '',
    none: c.classList.contains('hm-none'), background: getComputedStyle(c).backgroundColor,
  }))));
}

/** The published relays as the backbone view shows them: {name: 'up'|'down'}. */
export async function publishedStates(page) {
  return page.$$eval('#published tbody tr', (trs) => Object.fromEntries(trs.map((tr) => {
    const tds = tr.querySelectorAll('td');
    return [tds[0]?.textContent?.trim() ?? '', tds[2]?.textContent?.trim() ?? ''];
  })));
}

export async function healthLines(page) {
  return page.$$eval('#health li', (lis) => lis.map((li) => li.textContent.trim()));
}
