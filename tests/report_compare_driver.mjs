// Drives a report page rendered with --compare in headless Chromium for
// tests/test_report_compare_trials.py, at 1280 and 390 px: what the compare section says about
// trials, and whether any of its headers overlap or overflow. Prints JSON (last line).
//   node tests/report_compare_driver.mjs URL CHROMIUM [SCREENSHOT_DIR]
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const require = createRequire(process.env.TOOLS + "/package.json");
const { chromium } = require("playwright-core");
let axeSource = null;  // axe-core, when installed beside playwright-core: run on the open section
try { axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"); } catch { axeSource = null; }
const [url, executablePath, shots] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
const out = {};
try {
  for (const width of [1280, 390]) {
    // bypassCSP: only so that axe can be injected; the page's own script runs under its CSP hash
    const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(url, { waitUntil: "load" });
    // every fold of the section open: the side-by-side tables and the folded messages too
    await page.evaluate(() => document.querySelectorAll("#compare details").forEach((d) => { d.open = true; }));
    const seen = await page.evaluate(() => {
      const section = document.getElementById("compare");
      const note = section.querySelector(".trial-note");
      const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
      // the headers: column and row headings of every table, the section's headings and summaries
      const heads = [...section.querySelectorAll("th, h2, h3, h4, summary")].filter(visible);
      const textRects = (el) => {
        const rects = [];
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          if (!n.textContent.trim()) continue;
          const range = document.createRange();
          range.selectNodeContents(n);
          rects.push(...[...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0));
        }
        return rects;
      };
      const name = (el) => el.tagName.toLowerCase() + ": " + el.textContent.trim().slice(0, 40);
      const overflowing = [];
      const boxes = heads.map((el) => {
        const box = el.getBoundingClientRect();
        const rects = textRects(el);
        if (rects.some((r) => r.left < box.left - 1 || r.right > box.right + 1)) overflowing.push(name(el));
        return { el, rects };
      });
      const overlapping = [];
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const a = boxes[i], b = boxes[j];
          if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
          const hit = a.rects.some((r) => b.rects.some((s) =>
            Math.min(r.right, s.right) - Math.max(r.left, s.left) > 1 &&
            Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top) > 1));
          if (hit) overlapping.push([name(a.el), name(b.el)]);
        }
      }
      return {
        note: note ? note.textContent.replace(/\s+/g, " ").trim() : null,
        note_visible: !!note && visible(note),
        verdict: document.querySelector("#verdict a[href='#compare']")?.textContent.trim() ?? null,
        trials_cells: [...section.querySelectorAll("table.cmp-scores tbody tr")].map((tr) =>
          [tr.dataset.c, tr.querySelector("td[data-label='trials']").textContent.trim(),
            tr.querySelector("td[data-label='passed over trials']").textContent.replace(/\s+/g, " ").trim()]),
        grid_cells: Object.fromEntries([...document.querySelectorAll("#grid td.cell[data-configuration]")]
          .map((td) => [td.dataset.configuration, td.querySelector(".cmp-cell")?.textContent.replace(/\s+/g, " ").trim() ?? null])),
        headers: heads.length,
        overflowing,
        overlapping,
        scroll_width: document.documentElement.scrollWidth,
      };
    });
    seen.axe = null;
    if (axeSource) {
      await page.evaluate(axeSource);
      seen.axe = await page.evaluate(async () => (await window.axe.run("#compare")).violations
        .map((v) => `${v.id} (${v.impact}): ${v.nodes[0].html.slice(0, 100)}`));
    }
    if (shots) {
      await page.locator("#compare").screenshot({ path: `${shots}/compare-${width}.png` });
    }
    out[width] = { ...seen, errors };
    await context.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
