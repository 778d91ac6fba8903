// Helpers for the browser tests and the benchmark: start processes on loopback port 0
// and read their `listening <part> <proto> <addr>` lines, stop them by pid, launch
// Debian's chromium through playwright-core.

import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHOTS = join(ROOT, 'target', 'browser');

const started = new Set();

/**
 * Starts `program args...` in its own process group and resolves once `ready(lines)`
 * holds for the stdout lines read so far (default: `expect` listening lines).
 * Returns { child, pid, lines, listeners: [{part, proto, addr}], addr(part, proto), stderr(), stop() }.
 */
export function start(program, args, { expect = 1, ready = null, timeoutMs = 20000, env = {} } = {}) {
  const child = spawn(program, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // own process group: stop() can end whatever it started too
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'info', ...env },
  });
  const proc = {
    child, pid: child.pid, lines: [], listeners: [], err: '', exited: null,
    addr(part, proto) {
      const l = this.listeners.find((x) => x.part === part && x.proto === proto && !x.addr.startsWith('['));
      if (!l) throw new Error(`no ${part} ${proto} listener in ${JSON.stringify(this.listeners)}`);
      return l.addr;
    },
    stderr() { return this.err; },
    stop: () => stop(proc),
  };
  started.add(proc);
  let buf = '';
  const cond = ready ?? ((p) => p.listeners.length >= expect);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop(proc);
      reject(new Error(`${program} ${args.join(' ')}: not ready within ${timeoutMs} ms; stdout:\n${proc.lines.join('\n')}\nstderr:\n${proc.err.slice(-4000)}`));
    }, timeoutMs);
    let done = false;
    child.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        proc.lines.push(line);
        const w = line.trim().split(/\s+/);
        if (w[0] === 'listening' && w.length === 4) proc.listeners.push({ part: w[1], proto: w[2], addr: w[3] });
      }
      if (!done && cond(proc)) { done = true; clearTimeout(timer); resolve(proc); }
    });
    // A program that prints nothing until it ends (a load generator) is ready once
    // it runs, if `ready` says so with no line read.
    child.on('spawn', () => { if (!done && cond(proc)) { done = true; clearTimeout(timer); resolve(proc); } });
    child.stderr.on('data', (d) => { proc.err += d; if (proc.err.length > 200000) proc.err = proc.err.slice(-100000); });
    child.on('exit', (code, sig) => {
      proc.exited = { code, sig };
      started.delete(proc);
      if (!done) {
        done = true; clearTimeout(timer);
        reject(new Error(`${program} ${args.join(' ')} exited (${code ?? sig}) before it was ready; stderr:\n${proc.err.slice(-4000)}`));
      }
    });
  });
}

/** SIGTERM to the process group, SIGKILL after a grace period; resolves when it exited. */
export function stop(proc, graceMs = 5000) {
  if (proc.exited) return Promise.resolve(proc.exited);
  const kill = (sig) => { try { process.kill(-proc.pid, sig); } catch { try { process.kill(proc.pid, sig); } catch { /* gone */ } } };
  kill('SIGTERM');
  return new Promise((resolve) => {
    const t = setTimeout(() => kill('SIGKILL'), graceMs);
    proc.child.once('exit', (code, sig) => { clearTimeout(t); resolve({ code, sig }); });
    if (proc.exited) { clearTimeout(t); resolve(proc.exited); }
  });
}

/** Kills every process group still running (for after() and crashes). */
export async function stopAll() {
  await Promise.all([...started].map((p) => stop(p, 2000)));
}
process.on('exit', () => {
  for (const p of started) { try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ } }
});

export async function launch() {
  // playwright-core gives chromium a fresh temporary --user-data-dir of its own (and
  // refuses one passed in args), removed when the browser closes.
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return browser;
}

/**
 * A page that records every console error, page error, failed request and HTTP
 * error response, so a test can assert there were none.
 */
export async function watchedPage(browser, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const problems = [];
  // /readyz answers 503 while a part is not serving yet: an answer the page shows, not
  // a failure (Chromium still logs it as a failed resource load).
  const expected = (status, url) => status === 503 && new URL(url).pathname === '/readyz';
  page.on('console', (m) => {
    if (m.type() !== 'error' && m.type() !== 'warning') return;
    if (/status of 503/.test(m.text()) && expected(503, m.location()?.url ?? 'http://x/')) return;
    problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    const f = r.failure()?.errorText ?? '';
    // An EventSource or fetch cut by the page going away is not a failure of the page.
    if (page.isClosed() || (f === 'net::ERR_ABORTED' && closing.has(page))) return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${f}`);
  });
  page.on('response', (r) => { if (r.status() >= 400 && !expected(r.status(), r.url())) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`); });
  // A reload ends the page's stream too (net::ERR_ABORTED), as closing does.
  const reload = async () => {
    closing.add(page);
    await page.reload();
    await page.waitForLoadState('load');
    closing.delete(page);
  };
  return { page, context, problems, reload, close: async () => { closing.add(page); await context.close(); } };
}
const closing = new WeakSet();

export function shotsDir() {
  mkdirSync(SHOTS, { recursive: true });
  return SHOTS;
}

/** Polls `f` (sync or async) until it returns something truthy; throws `what` on timeout. */
export async function until(what, f, timeoutMs = 15000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try { last = await f(); } catch (e) { last = e; }
    if (last && !(last instanceof Error)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
