// Time to first paint and load of an HTML page in headless Chromium, and what it holds.
//
//   node tools/page_timing.mjs PAGE.html [--width 1280] [--height 800] [--chromium /usr/bin/chromium]
//
// Prints one line of JSON: {"first_paint_ms", "first_contentful_paint_ms", "dom_content_loaded_ms",
// "load_ms", "elements", "height_px", "screens", "gallery_y_px", "gallery_screen"} (gallery_*:
// where the failure gallery starts; screens of the window's height). Best of three loads.
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const [, value] = args.splice(at, 2);
  return value;
};
const width = Number(option("--width", "1280"));
const height = Number(option("--height", "800"));
const executablePath = option("--chromium", "/usr/bin/chromium");
const url = pathToFileURL(resolve(args[0])).href;
const browser = await chromium.launch({
  executablePath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
let best = null;
try {
  for (let run = 0; run < 3; run++) {
    const context = await browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    await page.goto(url, { waitUntil: "load" });
    const m = await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation")[0];
      const paint = Object.fromEntries(performance.getEntriesByType("paint").map((p) => [p.name, p.startTime]));
      const gallery = document.getElementById("failures");
      return {
        first_paint_ms: Math.round(paint["first-paint"] ?? -1),
        first_contentful_paint_ms: Math.round(paint["first-contentful-paint"] ?? -1),
        dom_content_loaded_ms: Math.round(nav.domContentLoadedEventEnd),
        load_ms: Math.round(nav.loadEventEnd),
        elements: document.getElementsByTagName("*").length,
        height_px: document.documentElement.scrollHeight,
        gallery_y_px: gallery ? Math.round(gallery.getBoundingClientRect().top + scrollY) : null,
      };
    });
    m.screens = +(m.height_px / height).toFixed(1);
    m.gallery_screen = m.gallery_y_px === null ? null : Math.floor(m.gallery_y_px / height) + 1;
    if (!best || m.load_ms < best.load_ms) best = m;
    await context.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(best));
