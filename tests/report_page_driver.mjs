// Drives the report page in headless Chromium for tests/test_report_script.py: prints JSON.
import { createRequire } from "node:module";
const require = createRequire(process.env.TOOLS + "/package.json");
const { chromium } = require("playwright-core");
const [url, executablePath] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
const out = {};
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const shown = () => page.evaluate(() => [...document.querySelectorAll("#episode-table tbody tr")]
    .filter((r) => getComputedStyle(r).display !== "none")
    .map((r) => [r.dataset.c, r.dataset.q, r.dataset.t, r.cells[6].textContent]));
  await page.goto(url, { waitUntil: "load" });
  out.bar_hidden = await page.evaluate(() => document.getElementById("filters").hidden);
  out.initial = await shown();
  // sort by rounds, then again for descending
  await page.click("#episode-table thead th:nth-child(7) button");
  out.sorted_asc = await shown();
  await page.click("#episode-table thead th:nth-child(7) button");
  out.sorted_desc = await shown();
  out.aria_sort = await page.getAttribute("#episode-table thead th:nth-child(7)", "aria-sort");
  out.hash_after_sort = await page.evaluate(() => location.hash);
  // search over question and answer text
  await page.fill("#f-search", "天气毛毛雨");
  await page.waitForTimeout(400);
  out.search = await shown();
  out.hash_after_search = await page.evaluate(() => decodeURIComponent(location.hash));
  out.count = await page.textContent("#f-count");
  await page.click("#f-reset");
  // failures only: the table, the grid and the gallery follow
  await page.check("#f-failed");
  out.failed = await shown();
  out.grid_single_oneshot = await page.textContent("#grid [data-count='single+oneshot']");
  out.grid_single_atomic = await page.textContent("#grid [data-count='single+atomic']");
  out.grid_classes = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#grid td[data-configuration]")]
    .map((td) => [td.dataset.configuration, td.className])));
  out.hash_failed = await page.evaluate(() => location.hash);
  // a filter that matches nothing says so
  await page.selectOption("#f-configuration", "loop+atomic");
  out.empty = await shown();
  out.empty_notes = await page.evaluate(() => [...document.querySelectorAll(".empty-note")]
    .filter((n) => !n.hidden).map((n) => n.parentElement.id));
  // the state in the URL fragment opens the same view
  const page2 = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page2.goto(url + "#f:c=single%2Batomic&m=empty_answer&sort=6-desc", { waitUntil: "load" });
  out.from_url = await page2.evaluate(() => [...document.querySelectorAll("#episode-table tbody tr")]
    .filter((r) => getComputedStyle(r).display !== "none").map((r) => [r.dataset.c, r.dataset.q]));
  out.from_url_controls = await page2.evaluate(() => [document.getElementById("f-configuration").value,
    document.getElementById("f-mode").value]);
  out.gallery_cards = await page2.evaluate(() => [...document.querySelectorAll("#failures article.card")]
    .filter((c) => getComputedStyle(c).display !== "none").map((c) => c.dataset.mode + " " + c.dataset.questionId));
  out.gallery_count = await page2.textContent("#mode-empty_answer [data-count-mode]");
  // print: every table within the page's width; phones: no sideways page scroll, card labels
  // beside (never over) their values
  const page3 = await browser.newPage({ viewport: { width: 720, height: 1000 } });
  await page3.goto(url, { waitUntil: "load" });
  await page3.emulateMedia({ media: "print" });
  out.print_too_wide = await page3.evaluate(() => [...document.querySelectorAll("table")]
    .filter((t) => t.offsetParent && t.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .map((t) => t.className));
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await phone.goto(url, { waitUntil: "load" });
  out.phone_scroll_width = await phone.evaluate(() => document.documentElement.scrollWidth);
  out.phone_overlaps = await phone.evaluate(() => {
    const bad = [];
    for (const td of document.querySelectorAll("#metrics table.cards-on-phone td[data-label]")) {
      const label = getComputedStyle(td, "::before");
      const range = document.createRange();
      range.selectNodeContents(td);
      const content = [...range.getClientRects()].filter((r) => r.width > 0);
      const left = td.getBoundingClientRect().left + parseFloat(getComputedStyle(td).paddingLeft);
      // the value starts after the label's column (the cell's left padding holds the label)
      if (label.float !== "left" || content.some((r) => r.left < left - 1)) bad.push(td.dataset.label);
    }
    return bad;
  });
  out.errors = errors;
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
