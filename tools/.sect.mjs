import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const [url, width, out, ...sels] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] });
const context = await browser.newContext({ viewport: { width: +width, height: +width > 600 ? 800 : 844 } });
const page = await context.newPage();
await page.goto(url, { waitUntil: "load" });
let i = 0;
for (const sel of sels) {
  if (sel.startsWith("click:")) { await page.click(sel.slice(6)); await page.waitForTimeout(300); continue; }
  if (sel.startsWith("type:")) { const [s, t] = sel.slice(5).split("|"); await page.fill(s, t); await page.waitForTimeout(400); continue; }
  await page.evaluate((s) => { const el = /^\d+$/.test(s) ? null : document.querySelector(s); if (el) { el.scrollIntoView(); } else { window.scrollTo(0, +s); } }, sel);
  await page.waitForTimeout(100);
  await page.screenshot({ path: `${out}-${i++}.png` });
}
console.log(await page.evaluate(() => location.hash));
await browser.close();
