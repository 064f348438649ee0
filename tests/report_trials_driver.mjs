// Drives a report page in headless Chromium for tests/test_report_trials_open.py: from the
// verdict line's "why" link of single+oneshot's failure over trials, to the filtered episode
// table, to the trial-3 transcript. Prints JSON. Usage:
//   TOOLS=tools node tests/report_trials_driver.mjs FILE_URL CHROMIUM [SCREENSHOT_DIR]
import { createRequire } from "node:module";
const require = createRequire(process.env.TOOLS + "/package.json");
const { chromium } = require("playwright-core");
const [url, executablePath, shots] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
const out = {};
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url, { waitUntil: "load" });
  const why = "#verdict a.sc-reason[data-filter*='single%2Boneshot']";
  out.why_links = await page.$$eval(why, (as) => as.map((a) => [a.textContent, a.getAttribute("data-filter")]));
  await page.click(why);
  await page.waitForTimeout(300);
  out.hash = await page.evaluate(() => decodeURIComponent(location.hash));
  out.controls = await page.evaluate(() => [document.getElementById("f-configuration").value,
    document.getElementById("f-mode").value, document.getElementById("f-trials").checked]);
  out.rows = await page.evaluate(() => [...document.querySelectorAll("#episode-table tbody tr")]
    .filter((r) => getComputedStyle(r).display !== "none")
    .map((r) => [r.dataset.c, r.dataset.q, r.dataset.t, r.dataset.p]));
  // the episode table is what the reader lands on
  out.episodes_top = await page.evaluate(() => Math.round(document.getElementById("episodes").getBoundingClientRect().top));
  const row = "#episode-table tbody tr[data-q='hottest'][data-t='3']";
  out.row_link = await page.getAttribute(row + " td.q a", "href");
  if (shots) { await page.screenshot({ path: shots + "/trials-filtered.png" }); }
  await page.click(row + " td.q a");
  await page.waitForTimeout(300);
  const target = (out.row_link || "#").split("#")[1];
  out.transcript = await page.evaluate((id) => {
    const d = document.getElementById(id);
    if (!d) { return null; }
    const box = d.getBoundingClientRect();
    return {
      open: d.open,
      shown: getComputedStyle(d).display !== "none" && !d.closest(".filtered-out"),
      top: Math.round(box.top),
      title: d.querySelector(".ep-title").textContent,
      facts: [...d.querySelectorAll(".ep-facts > div")].map((x) => x.textContent),
      nav: [...d.querySelectorAll(".fail-nav a")].map((a) => [a.textContent, a.getAttribute("href")]),
      badges: [...d.querySelectorAll("summary .badge")].map((b) => b.textContent),
    };
  }, target);
  if (shots) { await page.screenshot({ path: shots + "/trials-transcript.png" }); }
  // the "next failure" link opens the next failed transcript
  const next = out.transcript && out.transcript.nav.find((n) => n[0].startsWith("next"));
  if (next) {
    await page.click(`[id='${target}'] .fail-nav a[rel='next']`);
    await page.waitForTimeout(200);
    out.next = await page.evaluate((id) => {
      const d = document.getElementById(id);
      return d && { open: d.open, top: Math.round(d.getBoundingClientRect().top) };
    }, next[1].slice(1));
  }
  // a phone: the heading wraps inside the screen
  await page.setViewportSize({ width: 390, height: 800 });
  await page.evaluate((id) => document.getElementById(id).scrollIntoView(), target);
  out.phone_overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  if (shots) { await page.screenshot({ path: shots + "/trials-transcript-390.png" }); }
  out.errors = errors;
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
