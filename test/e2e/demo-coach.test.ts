import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VigilClient } from "../../src/client";
import { delay, freePort, REPO_ROOT, snapshotCheckout } from "./harness";
import { interrupt, refuseStaleNodeModules, startScript, waitForBanner, type StartedScript } from "./start-process";

/** Stops the script; it must exit cleanly. */
async function stop(started: StartedScript): Promise<void> {
  const code = await interrupt(started);
  if (code !== 0) throw new Error(`start.mjs did not stop cleanly (${code}):\n${started.output()}`);
}

/**
 * The demo `npm start` seeds (issue 14.7), exactly as a newcomer meets it: scripts/start.mjs in a
 * fresh copy of the checkout, the banner's curl line writes a journal task, the banner's /demo link
 * opens in Chromium, where the demo coach's tool approval is clicked. Nothing waits on time: every
 * step waits for what the page or the API shows.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"];
const UI_TIMEOUT = 30_000;

interface Demo {
  tenantId: string;
  apiKey: string;
  agentId: string;
  coachAgentId: string;
  coachCategoryId: string;
  createdAt: string;
}

let checkout: string;
let port: number;
let profileDir: string;
let context: BrowserContext;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (as .ci/run does), or set CHROMIUM_PATH`);
  refuseStaleNodeModules();
  checkout = snapshotCheckout();
  port = await freePort();
  profileDir = mkdtempSync(join(tmpdir(), "vigil-chromium-"));
  context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 900, height: 820 } });
});

afterAll(async () => {
  await context?.close().catch(() => undefined);
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  if (checkout) rmSync(checkout, { recursive: true, force: true });
});





const demoFile = () => join(checkout, ".wrangler", "demo.json");
const readDemo = (): Demo => JSON.parse(readFileSync(demoFile(), "utf8"));

/** The banner line that contains `needle`, trimmed. */
function bannerLine(banner: string, needle: string): string {
  const line = banner.split("\n").find((candidate) => candidate.includes(needle));
  expect(line, `banner has a line with "${needle}"`).toBeDefined();
  return line!.trim();
}

/** Runs a printed `curl -s -X POST URL -H 'k: v'… -d '…'` line with fetch. */
async function runCurl(line: string): Promise<Response> {
  const tokens = [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
  expect(tokens[0]).toBe("curl");
  let method = "GET";
  let url = "";
  let body: string | undefined;
  const headers = new Headers();
  for (let i = 1; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === "-X") method = tokens[++i]!;
    else if (token === "-H") {
      const header = tokens[++i]!;
      const colon = header.indexOf(":");
      headers.set(header.slice(0, colon).trim(), header.slice(colon + 1).trim());
    } else if (token === "-d") body = tokens[++i];
    else if (token === "-s") continue;
    else if (token.startsWith("http")) url = token;
    else throw new Error(`unexpected curl token ${token}`);
  }
  return fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
}

describe("the demo coach npm start seeds (builtin:playbook: journal wake, slot, approved saga)", () => {
  let first: Demo;

  it("the banner's curl wakes the coach; /demo shows its tool approval; Approve runs the saga once and the slot is kept", async () => {
    const run = startScript(checkout, port);
    const banner = await waitForBanner(run);
    try {
      first = readDemo();
      expect(first.coachAgentId).toMatch(/^ag_/);
      expect(banner).toContain('Seeded the agent "Demo coach"');
      const url = `http://127.0.0.1:${port}`;
      const api = new VigilClient({ baseUrl: url, token: first.apiKey });
      await expect(api.getAgent(first.coachAgentId)).resolves.toMatchObject({
        displayName: "Demo coach",
        allowedCategoryIds: [first.coachCategoryId],
        config: { modelId: "builtin:playbook", controlMode: "adaptive" },
      });

      // The link of the banner, opened before the change: the page then shows it arrive live.
      const link = bannerLine(banner, `/demo#agent=${first.coachAgentId}&`).split(/\s+/)[0]!;
      expect(link.startsWith(`${url}/demo#agent=${first.coachAgentId}&token=`)).toBe(true);
      const page = await context.newPage();
      page.on("pageerror", (error) => console.error("page error:", error));
      await page.goto(link);
      await page.locator("vigil-chat .status", { hasText: "Connected" }).waitFor({ timeout: UI_TIMEOUT });

      const written = await runCurl(bannerLine(banner, "/v1/journal/tasks"));
      expect(written.status).toBe(201);
      const source = (await written.json()) as { id: string; categoryId: string };
      expect(source.categoryId).toBe(first.coachCategoryId);

      // The wake's observation, then the approval the follow-up task waits for.
      // The system line names the task and its category by title, never by id.
      await page.locator("vigil-chat [data-type=message]", { hasText: "Task “Run 5k” changed in “Demo”" }).waitFor({ timeout: UI_TIMEOUT });
      expect((await page.locator("vigil-chat [data-role=note]").allTextContents()).join(" ")).not.toContain(source.id);
      const approval = page.getByRole("group", { name: "Allow create_follow_up_task?" });
      await approval.waitFor({ timeout: UI_TIMEOUT });
      await approval.locator(".detail", { hasText: "Follow up: Run 5k" }).waitFor({ timeout: UI_TIMEOUT });
      // The arguments as labelled fields, not JSON.
      await approval.locator(".fields dt", { hasText: "New task title" }).waitFor({ timeout: UI_TIMEOUT });
      mkdirSync(join(REPO_ROOT, "test-results"), { recursive: true });
      await page.screenshot({ path: join(REPO_ROOT, "test-results", "demo-coach-approval.png"), fullPage: true });
      await approval.getByRole("button", { name: "Approve" }).click();

      await page.locator("vigil-chat [data-role=assistant]", { hasText: "Follow-up task created: true." }).waitFor({ timeout: UI_TIMEOUT });
      await expect.poll(() => approval.getAttribute("data-status"), { timeout: UI_TIMEOUT }).toBe("resolved");
      await approval.locator(".answer", { hasText: /^Approved$/ }).waitFor({ timeout: UI_TIMEOUT });
      await page.screenshot({ path: join(REPO_ROOT, "test-results", "demo-coach.png"), fullPage: true });
      await page.close();

      // The saga's effect, exactly once; the slot the coach keeps; the decision a person resolved.
      const tasks = (await (await api.send("GET", `/v1/journal/tasks?categoryId=${first.coachCategoryId}`)).json()) as { data: Array<{ id: string; title: string }> };
      expect(tasks.data.map((task) => task.title).sort()).toEqual(["Follow up: Run 5k", "Run 5k"]);
      const memory = (await (await api.send("GET", `/v1/agents/${first.coachAgentId}/memory`)).json()) as { slots: { primaryGoal: string | null } };
      expect(memory.slots.primaryGoal).toBe("Run 5k");
      const resolved = (await (await api.send("GET", "/v1/decisions?status=resolved")).json()) as { data: Array<{ agentId: string; type: string; resolution: Record<string, unknown> }> };
      expect(resolved.data.filter((decision) => decision.agentId === first.coachAgentId)).toEqual([
        expect.objectContaining({ type: "decision/tool_approval", resolution: expect.objectContaining({ resolutionType: "approve", actor: "jwt:demo-visitor" }) }),
      ]);
      const pending = (await (await api.send("GET", "/v1/decisions?status=pending")).json()) as { data: unknown[] };
      expect(pending.data).toEqual([]);
    } finally {
      await stop(run);
    }
  });

  it("a demo.json from before the coach gets the coach seeded once on the next start, keeping the rest", async () => {
    const { coachAgentId: _coach, coachCategoryId: _category, ...older } = first;
    writeFileSync(demoFile(), `${JSON.stringify(older, null, 2)}\n`);
    let seeded = "";
    const run = startScript(checkout, port);
    const banner = await waitForBanner(run);
    try {
      expect(banner).toContain("Using the demo tenant");
      expect(banner).toContain('Seeded the agent "Demo coach"');
      const demo = readDemo();
      expect(demo).toMatchObject(older);
      expect(demo.coachAgentId).not.toBe(first.coachAgentId);
      seeded = demo.coachAgentId;
      expect(banner).toContain(`/demo#agent=${demo.coachAgentId}&`);
      const api = new VigilClient({ baseUrl: `http://127.0.0.1:${port}`, token: demo.apiKey });
      await expect(api.getAgent(demo.coachAgentId)).resolves.toMatchObject({ displayName: "Demo coach", allowedCategoryIds: [demo.coachCategoryId] });
    } finally {
      await stop(run);
    }
    // And the start after that reuses it.
    const again = startScript(checkout, port);
    const bannerAgain = await waitForBanner(again);
    try {
      expect(bannerAgain).not.toContain("Seeded");
      expect(readDemo().coachAgentId).toBe(seeded);
      expect(bannerAgain).toContain(`/demo#agent=${seeded}&`);
    } finally {
      await stop(again);
    }
  });
});
