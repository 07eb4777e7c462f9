// Opens key visualizer pages in headless Debian Chromium (playwright-core)
// and checks them; run by scripts/keyviz-browser-test.
//
//   node scripts/keyviz-browser-test.cjs NODE_MODULES_DIR SCREENSHOT.png PAGE...
//
// PAGE is `file:///...html` or `http://...`, optionally prefixed with `data:`
// to require a heatmap with data (the canvas's heatmap area must have
// non-background pixels; without the prefix, pages without rows only need
// to load cleanly). The screenshot is of the first page with data. Fails on
// any console error, page error, failed request or request to anything but
// the page itself (the pages must be self-contained).
"use strict";
const path = require("path");
const [modules, screenshot, ...pages] = process.argv.slice(2);
const { chromium } = require(path.join(modules, "playwright-core"));

const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
];

async function check(browser, spec, shot) {
  const needData = spec.startsWith("data:");
  const url = needData ? spec.slice(5) : spec;
  const errors = [];
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console error: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()} ${r.failure() && r.failure().errorText}`));
  const origin = url.startsWith("http") ? new URL(url).origin : null;
  await page.route("**/*", (route) => {
    const u = route.request().url();
    const own = u === url || (origin && u.startsWith(origin + "/"));
    if (own) { return route.continue(); }
    errors.push(`external request: ${u}`);
    return route.abort();
  });
  const response = await page.goto(url, { waitUntil: "load", timeout: 20000 });
  if (response && !response.ok()) { errors.push(`HTTP ${response.status()} for ${url}`); }
  const isKeyviz = await page.evaluate(() => !!document.getElementById("keyviz-data"));
  let result = { url, rows: 0, columns: 0, lit: 0 };
  if (isKeyviz) {
    await page.waitForFunction(() => window.keyviz && window.keyviz.ready, null, { timeout: 10000 });
    result = Object.assign(result, await page.evaluate(() => {
      const k = window.keyviz, a = k.area;
      const out = { rows: k.rows, columns: k.columns, lit: 0, total: a.width * a.height };
      if (!k.rows || !k.columns) { return out; }
      const ctx = document.getElementById("map").getContext("2d");
      const px = ctx.getImageData(a.x, a.y, a.width, a.height).data;
      const bg = k.background;
      for (let i = 0; i < px.length; i += 4) {
        if (Math.abs(px[i] - bg[0]) + Math.abs(px[i + 1] - bg[1]) + Math.abs(px[i + 2] - bg[2]) > 60) { out.lit++; }
      }
      return out;
    }));
    if (needData && !(result.rows > 0 && result.columns > 0)) {
      errors.push(`expected a heatmap with data, got ${result.rows} rows x ${result.columns} columns`);
    }
    if (result.rows > 0 && result.columns > 0) {
      if (result.lit < 50) { errors.push(`the heatmap area is blank (${result.lit} bright pixels)`); }
      // Every metric draws; a hover shows a tooltip.
      const options = await page.$$eval("#metric option", (os) => os.map((o) => o.value));
      for (const m of options) {
        await page.selectOption("#metric", m);
      }
      await page.selectOption("#metric", options[0]);
      const box = await page.locator("#map").boundingBox();
      const area = await page.evaluate(() => window.keyviz.area);
      await page.mouse.move(box.x + area.x + area.width / 2, box.y + area.y + area.height / 2);
      const tip = await page.locator("#tip").innerText();
      if (!/Key range:/.test(tip) || !/Node:/.test(tip)) { errors.push(`no tooltip on hover (got ${JSON.stringify(tip)})`); }
      await page.mouse.move(1, 1);
      if (shot) {
        await page.screenshot({ path: shot, fullPage: true });
        result.screenshot = shot;
      }
    }
  }
  await context.close();
  return { result, errors };
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: FLAGS,
    timeout: 30000,
  });
  let failed = 0, shot = screenshot;
  try {
    for (const spec of pages) {
      const { result, errors } = await check(browser, spec, shot);
      if (result.screenshot) { shot = null; }
      const what = result.rows ? `${result.rows} rows x ${result.columns} columns, ${result.lit} bright pixels` : "no heatmap data";
      if (errors.length) {
        failed++;
        console.log(`FAIL ${result.url} (${what})`);
        for (const e of errors) { console.log(`  ${e}`); }
      } else {
        console.log(`ok   ${result.url} (${what})`);
      }
    }
  } finally {
    await browser.close();
  }
  if (shot) { console.log("FAIL no page with heatmap data to take a screenshot of"); failed++; }
  else { console.log(`screenshot: ${screenshot}`); }
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log(`FAIL ${e && e.stack || e}`); process.exit(1); });
