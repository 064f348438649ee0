// Drives a large report page in headless Chromium for tests/test_report_pages.py: prints JSON.
// The episode table and the question matrix show a page of rows at a time; the pager moves
// through them; a filter narrows what is paged; printing shows every row.
import { createRequire } from "node:module";
const require = createRequire(process.env.TOOLS + "/package.json");
const { chromium } = require("playwright-core");
const [url, executablePath] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
const out = {};
const visible = (page, sel) => page.evaluate((s) => [...document.querySelectorAll(s)]
  .filter((r) => getComputedStyle(r).display !== "none").length, sel);
const pager = (page, n) => page.evaluate((i) => {
  const nav = document.querySelectorAll("nav.pager")[i];
  return nav && !nav.hidden ? nav.querySelector("output").textContent : null;
}, n);
try {
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    const page = await browser.newPage({ viewport: { width, height } });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(url, { waitUntil: "load" });
    const seen = { errors };
    seen.height = await page.evaluate(() => document.documentElement.scrollHeight);
    seen.rows = await visible(page, "#episode-table tbody tr");
    seen.questions = await visible(page, "#chains tr.question");
    seen.pagers = [await pager(page, 0), await pager(page, 1)];
    if (width === 1280) {
      const first = await page.evaluate(() => document.querySelector("#episode-table tbody tr:not(.paged-out)").dataset.q);
      await page.click("nav.pager >> nth=0 >> button[data-step='1']");
      seen.next = [await pager(page, 0), await visible(page, "#episode-table tbody tr"),
        await page.evaluate(() => document.querySelector("#episode-table tbody tr:not(.paged-out)").dataset.q), first];
      await page.selectOption("#f-configuration", "single+atomic");
      await page.waitForTimeout(200);
      seen.filtered = [await pager(page, 0), await visible(page, "#episode-table tbody tr"),
        await page.evaluate(() => [...document.querySelectorAll("#episode-table tbody tr")]
          .filter((r) => getComputedStyle(r).display !== "none").every((r) => r.dataset.c === "single+atomic"))];
      await page.click("nav.pager >> nth=0 >> button[data-step='all']");
      seen.all = [await visible(page, "#episode-table tbody tr")];
      await page.selectOption("#f-configuration", "");
      await page.emulateMedia({ media: "print" });
      await page.evaluate(() => window.dispatchEvent(new Event("beforeprint")));
      seen.printed = await visible(page, "#episode-table tbody tr");
    }
    out[width] = seen;
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
