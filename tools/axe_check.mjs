// Accessibility check of the HTML report: axe-core in headless Chromium at 1280 and 390 px.
//
//   cd tools && npm install            # axe-core and playwright-core (node_modules is not tracked)
//   node tools/axe_check.mjs [reports/index.html] [--screenshots DIR] [--chromium /usr/bin/chromium]
//
// Loads the page from disk (file://, no network), runs every axe-core rule at each width and
// prints the violations by impact. Exits 1 when any violation is serious or critical. With
// --screenshots, also saves the first screen (and the whole page) at each width as PNG.
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
const shots = option("--screenshots", null);
const executablePath = option("--chromium", "/usr/bin/chromium");
const page_path = resolve(args[0] || "reports/index.html");
const WIDTHS = [1280, 390];

// playwright gives each launch a fresh, temporary --user-data-dir of its own
const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
let serious = 0;
try {
  for (const width of WIDTHS) {
    const context = await browser.newContext({ viewport: { width, height: width > 600 ? 800 : 844 } });
    const page = await context.newPage();
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(page_path).href, { waitUntil: "load" });
    if (shots) {
      mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: join(shots, `first-screen-${width}.png`) });
      await page.screenshot({ path: join(shots, `full-${width}.png`), fullPage: true });
    }
    // axe runs in the page, injected by the test driver (the page's own CSP does not apply)
    await page.evaluate(axeSource);
    const result = await page.evaluate(async () =>
      // eslint-disable-next-line no-undef
      axe.run(document));
    const counts = {};
    for (const v of result.violations) {
      counts[v.impact] = (counts[v.impact] || 0) + 1;
      if (v.impact === "serious" || v.impact === "critical") serious += 1;
      console.log(`${width}px ${v.impact} ${v.id}: ${v.help} (${v.nodes.length} nodes)`);
      for (const n of v.nodes.slice(0, 3)) console.log(`    ${n.target.join(" ")}: ${n.failureSummary.split("\n").slice(1, 2).join(" ")}`);
    }
    for (const e of errors) console.log(`${width}px console error: ${e}`);
    console.log(`${width}px: ${result.violations.length} violations ${JSON.stringify(counts)}, ${result.passes.length} rules passed, ${result.incomplete.length} need review`);
    await context.close();
  }
} finally {
  await browser.close();
}
console.log(serious ? `FAIL: ${serious} serious or critical violations` : "OK: 0 serious or critical violations at 1280 and 390 px");
process.exit(serious ? 1 : 0);
