import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VigilClient } from "../../src/client";
import { freePort, raw, REPO_ROOT, snapshotCheckout } from "./harness";
import { interrupt, refuseStaleNodeModules, startScript, waitForBanner, type StartedScript } from "./start-process";

/**
 * The operator console (/console) in headless Chromium against `npm start` (scripts/start.mjs in a fresh
 * copy of the checkout, with its demo coach): sign in with the banner's API key, answer the coach's
 * approval in the Decisions inbox, follow the run in the timeline, edit a slot, engage a brake and see
 * the next wake refused. Every step waits for what the page shows; the page must log no error.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-component-update",
  "--disable-sync",
];
const UI_TIMEOUT = 30_000;
const SHOTS = join(REPO_ROOT, "test-results", "console");

let checkout: string;
let port: number;
let url: string;
let run: StartedScript;
let banner: string;
let profileDir: string;
let context: BrowserContext;
let page: Page;
let demo: { apiKey: string; coachAgentId: string; coachCategoryId: string };
let api: VigilClient;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (as .ci/run does), or set CHROMIUM_PATH`);
  refuseStaleNodeModules();
  checkout = snapshotCheckout();
  port = await freePort();
  url = `http://127.0.0.1:${port}`;
  run = startScript(checkout, port);
  banner = await waitForBanner(run);
  demo = JSON.parse(readFileSync(join(checkout, ".wrangler", "demo.json"), "utf8"));
  api = new VigilClient({ baseUrl: url, token: demo.apiKey });
  mkdirSync(SHOTS, { recursive: true });
  profileDir = mkdtempSync(join(tmpdir(), "vigil-chromium-"));
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 860 },
  });
  page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(`console: ${message.text()}`);
  });
  // Which request a "Failed to load resource" line was about.
  page.on("response", (response) => {
    if (response.status() >= 400)
      pageErrors.push(`HTTP ${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
  });
});

afterAll(async () => {
  await context?.close().catch(() => undefined);
  if (run) await interrupt(run).catch(() => undefined);
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  if (checkout) rmSync(checkout, { recursive: true, force: true });
});

/** The banner line after the one containing `needle`, trimmed. */
function lineAfter(needle: string): string {
  const lines = banner.split("\n");
  const index = lines.findIndex((line) => line.includes(needle));
  expect(index, `banner has "${needle}"`).toBeGreaterThanOrEqual(0);
  return lines[index + 1]!.trim();
}

/**
 * A refusal the test provoked (a bad key, a braked wake): Chromium logs its status as a console error, which
 * is the page working, not failing. Exactly those lines are taken out; anything else stays and fails the run.
 */
function expectRefused(status: number): void {
  const mine = pageErrors.filter((line) => line.includes(`HTTP ${status} `) || line.includes(`status of ${status} `));
  expect(mine.length, `the refusal with HTTP ${status} was seen`).toBeGreaterThan(0);
  const rest = pageErrors.filter((line) => !mine.includes(line));
  pageErrors.length = 0;
  pageErrors.push(...rest);
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** A journal write in the coach's category: its subscription wakes the coach, which asks before its follow-up task. */
async function writeTask(title: string): Promise<void> {
  const response = await api.send("POST", "/v1/journal/tasks", { title, categoryId: demo.coachCategoryId });
  expect(response.status).toBe(201);
}

async function followUps(title: string): Promise<string[]> {
  const response = await api.send("GET", `/v1/journal/tasks?categoryId=${demo.coachCategoryId}`);
  const tasks = (await response.json()) as { data: Array<{ title: string }> };
  return tasks.data.map((task) => task.title).filter((candidate) => candidate === `Follow up: ${title}`);
}

describe("the operator console (/console) in Chromium against npm start", () => {
  it("npm start's banner prints the console's URL and, on a line of its own, the key to paste", () => {
    expect(lineAfter("Operator console")).toBe(`${url}/console`);
    expect(lineAfter('"API key" field')).toBe(demo.apiKey);
  });

  it("serves the page with a Content Security Policy and its assets from the Worker, no CDN", async () => {
    const html = await raw(`${url}/console`);
    expect(html.status).toBe(200);
    const csp = html.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const assets = [...html.text.matchAll(/(?:src|href)="([^"]+)"/g)]
      .map((match) => match[1]!)
      .filter((ref) => !ref.startsWith("data:"));
    expect(assets.length).toBe(2);
    for (const asset of assets) {
      expect(asset.startsWith("/console/")).toBe(true);
      expect((await raw(`${url}${asset}`)).status).toBe(200);
    }
  });

  it("signs in with the API key from the keyboard, keeps it in sessionStorage only, never in the URL", async () => {
    await page.goto(`${url}/console`);
    await page.getByLabel("API key").fill("vk_not_a_real_key");
    await page.getByLabel("API key").press("Enter");
    await page.getByRole("alert").filter({ hasText: "not accepted" }).waitFor({ timeout: UI_TIMEOUT });
    expectRefused(401);
    await page.getByLabel("API key").fill(demo.apiKey);
    await page.keyboard.press("Tab");
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Sign in");
    await page.keyboard.press("Enter");
    await page.getByRole("navigation", { name: "Console" }).waitFor({ timeout: UI_TIMEOUT });
    for (const name of ["Agents", "Decisions", "Events", "Usage"])
      await page.getByRole("link", { name, exact: true }).waitFor();
    await page.getByRole("link", { name: "Demo coach" }).waitFor({ timeout: UI_TIMEOUT });
    expect(page.url()).not.toContain(demo.apiKey);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([demo.apiKey]);
    expect(await page.evaluate(() => Object.values(localStorage))).toEqual([]);
    await shot("agents");
    // Search and filters go to the API (GET /v1/agents?q=&lifecycle=).
    await page.getByLabel("Search").fill("coach");
    await expect.poll(() => page.getByRole("link", { name: "Demo agent" }).count(), { timeout: UI_TIMEOUT }).toBe(0);
    await page.getByRole("link", { name: "Demo coach" }).waitFor();
    await page.getByLabel("Lifecycle").selectOption("dormant");
    await page.getByText(/^No agents match/).waitFor({ timeout: UI_TIMEOUT });
    await page.getByLabel("Lifecycle").selectOption("");
    await page.getByLabel("Search").fill("");
    await page.getByRole("link", { name: "Demo agent" }).waitFor({ timeout: UI_TIMEOUT });
  });

  it("shows the coach's approval after a journal write; Approve completes its run with one follow-up", async () => {
    await page.getByRole("link", { name: "Decisions", exact: true }).click();
    await page.getByText("Nothing is waiting for a decision.").waitFor({ timeout: UI_TIMEOUT });
    await writeTask("Run 5k");
    const card = page.getByRole("group", { name: "Allow create_follow_up_task?" });
    await card.waitFor({ timeout: UI_TIMEOUT });
    await card.getByRole("row", { name: "New task title Follow up: Run 5k" }).waitFor();
    await shot("decisions");
    await card.getByLabel("Comment (optional)").fill("looks right");
    await card.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Nothing is waiting for a decision.").waitFor({ timeout: UI_TIMEOUT });
    await page
      .getByRole("row")
      .filter({ hasText: "looks right" })
      .filter({ hasText: "Approved" })
      .waitFor({ timeout: UI_TIMEOUT });

    await page.goto(`${url}/console#/agents/${demo.coachAgentId}/timeline`);
    const subscriptionRun = page.getByRole("row").filter({ hasText: "subscription" });
    await subscriptionRun.locator("[data-status=completed]").waitFor({ timeout: UI_TIMEOUT });
    await page.getByText("Live: following the event stream").waitFor();
    await shot("timeline");
    expect(await followUps("Run 5k")).toEqual(["Follow up: Run 5k"]);

    await subscriptionRun.getByRole("link").click();
    const step = page.locator(".step[data-tool=create_follow_up_task]");
    await step.waitFor({ timeout: UI_TIMEOUT });
    await step.getByText(/^Approved by key:/).waitFor();
    await step.getByRole("row", { name: "New task title Follow up: Run 5k" }).first().waitFor();
    await shot("run");
  });

  it("edits a slot: the API then holds the new value", async () => {
    await page.getByRole("link", { name: "Timeline" }).click();
    await page.getByRole("link", { name: "Memory" }).click();
    const goal = page.getByLabel(/^primaryGoal \(version \d+\)$/);
    await expect.poll(() => goal.inputValue(), { timeout: UI_TIMEOUT }).toBe("Run 5k");
    await goal.fill("Run 10k");
    await page.getByRole("button", { name: "Save primaryGoal" }).click();
    await page.getByText(/^Saved \(version \d+\)\.$/).waitFor({ timeout: UI_TIMEOUT });
    // "Saved" is shown once the PUT succeeded: the API holds the value by then (one read, not a poll: every
    // request counts against npm start's per-key rate limit, which the console shares with this test).
    expect((await api.getMemory(demo.coachAgentId)).slots.primaryGoal).toBe("Run 10k");
    await shot("memory");
  });

  it("engages a brake on the coach: the next wake is refused, and Release lets wakes in again", async () => {
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    await page.getByText("No brake is engaged.").waitFor({ timeout: UI_TIMEOUT });
    await page.getByLabel("Brake").selectOption({ label: "Demo coach" });
    await page.getByLabel("Reason").fill("checking the console");
    await page.getByRole("button", { name: "Engage brake" }).click();
    const brake = page.getByRole("row").filter({ hasText: "checking the console" });
    await brake.waitFor({ timeout: UI_TIMEOUT });
    await page.locator("figure.chart").first().waitFor({ timeout: UI_TIMEOUT });
    await shot("usage");

    await page.goto(`${url}/console#/agents/${demo.coachAgentId}/timeline`);
    await page.getByRole("button", { name: "Wake now" }).click();
    await page.getByRole("alert").filter({ hasText: "brake_engaged" }).waitFor({ timeout: UI_TIMEOUT });
    await shot("timeline-brake");
    expectRefused(423);

    await page.getByRole("link", { name: "Usage", exact: true }).click();
    await brake.getByRole("button", { name: "Release" }).click();
    await page.getByText("No brake is engaged.").waitFor({ timeout: UI_TIMEOUT });
    await page.goto(`${url}/console#/agents/${demo.coachAgentId}/timeline`);
    await page.getByRole("button", { name: "Wake now" }).click();
    await page
      .getByRole("row")
      .filter({ hasText: "manual" })
      .locator("[data-status=completed]")
      .waitFor({ timeout: UI_TIMEOUT });
  });

  it("lists the tenant's live events and fits a phone's width", async () => {
    await page.getByRole("link", { name: "Events", exact: true }).click();
    await page.locator(".event-list li[data-type^='run.']").first().waitFor({ timeout: UI_TIMEOUT });
    await page.getByLabel("Event type").fill("decision.resolved");
    await expect
      .poll(() =>
        page
          .locator(".event-list li")
          .evaluateAll((items) => items.every((item) => item.getAttribute("data-type") === "decision.resolved")),
      )
      .toBe(true);
    await shot("events");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "Agents", exact: true }).click();
    await page.getByRole("link", { name: "Demo coach" }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await shot("agents-phone");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it("signs out: the key leaves sessionStorage and the sign-in form is back; the page logged no error", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
