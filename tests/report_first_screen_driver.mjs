// Drives report pages in headless Chromium for tests/test_report_first_screen.py: prints JSON.
// For each page and width: where the scorecard ends (it must sit on the first screen), then a
// click on the scorecard's first failure reason (the filtered episode table must follow).
import { createRequire } from "node:module";
const require = createRequire(process.env.TOOLS + "/package.json");
const { chromium } = require("playwright-core");
const [executablePath, ...urls] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
const out = {};
try {
  for (const url of urls) {
    const pages = {};
    for (const [width, height] of [[1280, 800], [390, 844]]) {
      const page = await browser.newPage({ viewport: { width, height } });
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(url, { waitUntil: "load" });
      const seen = await page.evaluate(() => {
        const card = document.querySelector("#verdict table.scorecard");
        const rows = [...card.querySelectorAll("tbody tr")].map((r) => r.getBoundingClientRect().bottom);
        const badge = document.querySelector("#verdict .sc-badges").getBoundingClientRect().bottom;
        return { rows, badge, scroll_width: document.documentElement.scrollWidth };
      });
      const reason = await page.$("#verdict a.sc-reason");
      if (reason) {
        const filter = await reason.getAttribute("data-filter");
        await reason.click();
        await page.waitForTimeout(200);
        seen.filter = filter;
        seen.hash = await page.evaluate(() => decodeURIComponent(location.hash));
        seen.shown = await page.evaluate(() => [...document.querySelectorAll("#episode-table tbody tr")]
          .filter((r) => getComputedStyle(r).display !== "none")
          .map((r) => [r.dataset.c, r.dataset.q, r.dataset.t, r.dataset.p, r.dataset.m]));
        seen.controls = await page.evaluate(() => [document.getElementById("f-configuration").value,
          document.getElementById("f-mode").value, document.getElementById("f-failed").checked]);
        seen.table_top = await page.evaluate(() => document.getElementById("episodes").getBoundingClientRect().top);
      }
      seen.errors = errors;
      pages[width] = seen;
      await page.close();
    }
    out[url] = pages;
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
