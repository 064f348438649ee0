// Screenshots and accessibility check of HTML reports: headless Chromium at 1280 and 390 px.
//
//   cd tools && npm install     # axe-core and playwright-core (node_modules is not tracked)
//   node tools/report_screens.mjs OUT_DIR NAME=PAGE.html [NAME=PAGE.html ...] [--chromium PATH]
//       [--docs DIR]     (also DIR/NAME-WIDTH.jpg, the first screens docs/report.md shows)
//
// For each page and width it saves OUT_DIR/NAME-WIDTH.png (the first screen),
// OUT_DIR/NAME-WIDTH-full.png (the page, cut at 12,000 px) and OUT_DIR/NAME-WIDTH-failures.png
// (the first screen with the filter "failures only" set through the URL fragment), runs every
// axe-core rule, and reports sideways overflow (the page, and each table wider than its box).
// Exits 1 when any violation is serious or critical, or the page scrolls sideways.
import { createRequire } from "node:module";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const [, value] = args.splice(at, 2);
  return value;
};
const executablePath = option("--chromium", "/usr/bin/chromium");
const docs = option("--docs", "");  // also save each first screen as DOCS/NAME-WIDTH.jpg
const [out, ...pages] = args;
if (!out || !pages.length) {
  console.error("usage: node tools/report_screens.mjs OUT_DIR NAME=PAGE.html [...]");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const WIDTHS = [1280, 390];
const browser = await chromium.launch({
  executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
let bad = 0;
try {
  for (const spec of pages) {
    const [name, path] = spec.split("=");
    const url = pathToFileURL(resolve(path)).href;
    for (const width of WIDTHS) {
      const height = width > 600 ? 800 : 844;
      const context = await browser.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      await page.goto(url, { waitUntil: "load" });
      await page.screenshot({ path: join(out, `${name}-${width}.png`) });
      if (docs) {
        mkdirSync(docs, { recursive: true });
        await page.screenshot({ path: join(docs, `${name}-${width}.jpg`), type: "jpeg", quality: 70 });
      }
      const full = await page.evaluate(() => document.documentElement.scrollHeight);
      await page.screenshot({ path: join(out, `${name}-${width}-full.png`), fullPage: full <= 12000,
        clip: full > 12000 ? { x: 0, y: 0, width, height: 12000 } : undefined });
      const overflow = await page.evaluate(() => {
        const doc = document.documentElement;
        const wide = [...document.querySelectorAll(".scroll")]
          .filter((el) => el.scrollWidth > el.clientWidth + 1 && !el.closest("details:not([open])"))
          .map((el) => `${el.getAttribute("aria-label") || el.className} (${el.scrollWidth} > ${el.clientWidth})`);
        return { page: doc.scrollWidth > doc.clientWidth + 1 ? doc.scrollWidth : 0, wide };
      });
      await page.evaluate(axeSource);
      const result = await page.evaluate(async () => axe.run(document)); // eslint-disable-line no-undef
      const counts = {};
      for (const v of result.violations) {
        counts[v.impact] = (counts[v.impact] || 0) + 1;
        if (v.impact === "serious" || v.impact === "critical") bad += 1;
        console.log(`${name} ${width}px ${v.impact} ${v.id}: ${v.help} (${v.nodes.length} nodes)`);
        for (const n of v.nodes.slice(0, 3)) console.log(`    ${n.target.join(" ")}`);
      }
      const unchecked = result.incomplete.filter((v) => v.id === "color-contrast");
      const contrast = unchecked.length ? unchecked[0].nodes.length : 0;
      if (overflow.page) { bad += 1; console.log(`${name} ${width}px: the page scrolls sideways (${overflow.page} px wide)`); }
      if (width > 600) for (const w of overflow.wide) console.log(`${name} ${width}px: table scrolls sideways: ${w}`);
      for (const e of errors) { bad += 1; console.log(`${name} ${width}px script error: ${e}`); }
      console.log(`${name} ${width}px: ${result.violations.length} violations ${JSON.stringify(counts)}, contrast not measurable on ${contrast} elements, ${full} px tall`);
      // the same page filtered through the URL fragment
      await page.goto(url + "#f:fail=1", { waitUntil: "load" });
      await page.screenshot({ path: join(out, `${name}-${width}-failures.png`) });
      await context.close();
    }
  }
} finally {
  await browser.close();
}
console.log(bad ? `FAIL: ${bad} problems` : "OK: 0 serious or critical violations, no sideways page scroll, at 1280 and 390 px");
process.exit(bad ? 1 : 0);
