// Drives the report page in headless Chromium for tests/test_report_table_browser.py: search
// over failure reasons and tool names, "sort by" at 390 px, one filter state followed by every
// section, the skip link, the back-to-top link, axe-core. Prints one line of JSON.
//
//   TOOLS=tools node tests/report_table_driver.mjs file:///…/index.html /usr/bin/chromium
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const require = createRequire(process.env.TOOLS + "/package.json");
const { chromium } = require("playwright-core");
let axeSource = null;
try { axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"); } catch { axeSource = null; }
const [url, executablePath, reasons] = process.argv.slice(2);  // reasons: a page with unmet expectations
const browser = await chromium.launch({ executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
const out = { errors: [] };
const visible = (el) => el && getComputedStyle(el).display !== "none" && !el.closest(".filtered-out") &&
  el.getClientRects().length > 0;
async function open(width, hash) {
  const page = await browser.newPage({ viewport: { width, height: width > 600 ? 800 : 844 } });
  page.on("pageerror", (e) => out.errors.push(String(e)));
  await page.goto(url + (hash || ""), { waitUntil: "load" });
  return page;
}
const rowsShown = (page) => page.evaluate(() => [...document.querySelectorAll("#episode-table tbody tr")]
  .filter((r) => getComputedStyle(r).display !== "none")
  .map((r) => ({ c: r.dataset.c, q: r.dataset.q, t: r.dataset.t, p: r.dataset.p, m: r.dataset.m,
    cells: [...r.cells].map((td) => td.textContent.trim()) })));
async function axe(page) {
  if (!axeSource) { return null; }
  await page.evaluate(axeSource);
  // eslint-disable-next-line no-undef
  const result = await page.evaluate(async () => axe.run(document));
  return result.violations.map((v) => v.id + " (" + v.impact + "): " + v.nodes.length);
}
try {
  // search: failure modes (their labels), tool names
  const page = await open(1280);
  await page.fill("#f-search", "empty answer");
  await page.waitForTimeout(400);
  out.search_mode = await rowsShown(page);
  await page.fill("#f-search", "geocode_city");
  await page.waitForTimeout(400);
  out.search_tool = await rowsShown(page);
  out.search_count = await page.textContent("#f-count");
  await page.fill("#f-search", "");
  await page.waitForTimeout(400);
  out.mode_options = await page.evaluate(() => [...document.querySelectorAll("#f-mode option")].map((o) => o.value));
  // the skip link is the first tab stop, shown when focused, and leads past the bar
  const keys = await open(1280);
  await keys.keyboard.press("Tab");
  out.first_tab = await keys.evaluate(() => {
    const a = document.activeElement, r = a.getBoundingClientRect();
    return { text: a.textContent.trim(), href: a.getAttribute("href"), shown: r.top >= 0 && r.bottom <= innerHeight };
  });
  await keys.keyboard.press("Enter");
  await keys.waitForTimeout(200);
  out.after_skip = await keys.evaluate(() => location.hash);
  await keys.keyboard.press("Tab");
  out.after_skip_focus = await keys.evaluate(() => {
    const a = document.activeElement, bar = document.getElementById("bar");
    return { in_bar: bar.contains(a), section: (a.closest("section") || {}).id || "" };
  });
  await keys.close();
  // unsorted: missing values sort last both ways (tokens, column 8)
  await page.check("#f-trials");
  await page.click("#episode-table thead th:nth-child(9) button");
  out.tokens_asc = (await rowsShown(page)).map((r) => r.cells[8]);
  await page.click("#episode-table thead th:nth-child(9) button");
  out.tokens_desc = (await rowsShown(page)).map((r) => r.cells[8]);
  out.axe_1280 = await axe(page);
  await page.close();

  // one filter state: failures only + every trial + single+oneshot
  const f = await open(1280, "#f:fail=1&c=single%2Boneshot&t=all");
  out.filtered = {
    rows: await rowsShown(f),
    count: await f.textContent("#f-count"),
    grid: await f.evaluate(() => Object.fromEntries([...document.querySelectorAll("#grid td[data-configuration]")]
      .map((td) => [td.dataset.configuration, [td.querySelector("[data-count]").textContent, td.className]]))),
    metrics: await f.evaluate(() => Object.fromEntries([...document.querySelectorAll("#metrics [data-count]")]
      .map((s) => [s.dataset.count, [s.textContent, s.closest("td").className]]))),
    metrics_unfiltered: await f.evaluate(() => document.querySelectorAll("#metrics td.not-filtered").length),
    notes: await f.evaluate(() => Object.fromEntries([...document.querySelectorAll(".filter-note")]
      .filter((n) => !n.hidden).map((n) => [n.closest("section").id, n.textContent]))),
    matrix: await f.evaluate((v) => {
      const shown = eval(v);
      return [...document.querySelectorAll("#chains tr.question")].filter(shown).map((tr) => ({
        q: tr.dataset.q,
        cells: [...tr.querySelectorAll(".mcell")].filter((c) => !c.classList.contains("dim") && c.querySelector("a"))
          .map((c) => [c.dataset.label, (c.querySelector(".trial-match") || { textContent: "" }).textContent.trim()]),
      }));
    }, visible.toString()),
    gallery_counts: await f.evaluate(() => [...document.querySelectorAll("#failures [data-count-mode]")]
      .map((s) => [s.dataset.countMode, s.dataset.countC || "", s.textContent])),
    gallery_cards: await f.evaluate((v) => {
      const shown = eval(v);
      return [...document.querySelectorAll("#failures article.card")].filter(shown).length;
    }, visible.toString()),
    empty_notes: await f.evaluate(() => [...document.querySelectorAll(".empty-note")]
      .filter((n) => !n.hidden).map((n) => n.parentElement.id)),
  };
  out.axe_filtered = await axe(f);
  await f.close();

  // phones: "sort by", the back-to-top link in the flow
  const phone = await open(390);
  out.phone = {
    heads_hidden: await phone.evaluate(() => getComputedStyle(document.querySelector("#episode-table thead")).display === "none"),
    pick_shown: await phone.evaluate(() => document.getElementById("f-sort").getClientRects().length > 0),
    pick_label: await phone.evaluate(() => document.getElementById("f-sort").closest("label").textContent.trim().slice(0, 7)),
  };
  await phone.selectOption("#f-sort", "6-desc");
  out.phone.sorted_desc = (await rowsShown(phone)).map((r) => r.cells[6]);
  out.phone.hash = await phone.evaluate(() => location.hash);
  await phone.selectOption("#f-sort", "6-asc");
  out.phone.sorted_asc = (await rowsShown(phone)).map((r) => r.cells[6]);
  out.phone.aria_sort = await phone.getAttribute("#episode-table thead th:nth-child(7)", "aria-sort");
  out.phone.to_top = await phone.evaluate(() => {
    const a = document.querySelector(".to-top");
    const r = a.getBoundingClientRect(), f = document.querySelector("footer").getBoundingClientRect();
    return { position: getComputedStyle(a).position, below_footer: r.top >= f.bottom - 1 };
  });
  out.phone.scroll_width = await phone.evaluate(() => document.documentElement.scrollWidth);
  out.axe_390 = await axe(phone);
  await phone.close();
  // wide screens: back to top sits in the margin, clear of the text
  const wide = await open(1280);
  out.to_top_1280 = await wide.evaluate(() => {
    const a = document.querySelector(".to-top").getBoundingClientRect();
    const main = document.querySelector("main"), pad = parseFloat(getComputedStyle(main).paddingRight);
    return { position: getComputedStyle(document.querySelector(".to-top")).position,
      clear: a.left >= main.getBoundingClientRect().right - pad };
  });
  await wide.close();
  // the mode filter's "unmet expectation": rows, gallery cards and counts agree
  if (reasons) {
    const u = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    u.on("pageerror", (e) => out.errors.push(String(e)));
    await u.goto(reasons + "#f:m=unmet_expectation", { waitUntil: "load" });
    out.unmet = await u.evaluate((v) => {
      const shown = eval(v);
      return {
        rows: [...document.querySelectorAll("#episode-table tbody tr")].filter(shown).map((r) => r.dataset.q),
        cards: [...document.querySelectorAll("#failures article.card")].filter(shown).map((c) => c.dataset.mode + " " + c.dataset.questionId),
        count: document.querySelector("#mode-unmet_expectation [data-count-mode]").textContent,
      };
    }, visible.toString());
    await u.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
