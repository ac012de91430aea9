import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VigilClient } from "../../src/client";
import { widgetSessionId } from "../../src/core/runtime/widget-session";
import { DevServer, raw, REPO_ROOT } from "./harness";

/**
 * The chat widget in headless Chromium against a real `wrangler dev`: /demo with a widget JWT,
 * streamed replies, an ask_user decision answered by clicking, and a dropped connection resumed
 * with Last-Event-ID. Nothing here waits on time: every check waits for what the DOM shows.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-component-update", "--disable-sync"];
const UI_TIMEOUT = 30_000;

let server: DevServer;
let api: VigilClient;
let echoAgent: string;
let askingAgent: string;
let plannerAgent: string;
let categoryId: string;
let token: string;
let profileDir: string;
let context: BrowserContext;
/** Every request the pages made to the API, with the credential they sent. */
const apiRequests: Array<{ method: string; path: string; authorization: string | undefined; lastEventId: string | undefined }> = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (as .ci/run does), or set CHROMIUM_PATH`);
  server = await DevServer.start();
  const tenant = await server.tenant("widget");
  api = tenant.client;
  // Words 100 ms apart: a loaded browser still renders the streaming bubble in several distinct states (not one batch).
  echoAgent = (await api.createAgent({ kind: "coach", displayName: "Echo", model: "builtin:echo", modelOptions: { chunkDelayMs: 100 } } as never)).id;
  askingAgent = (
    await api.createAgent({
      kind: "coach",
      displayName: "Booker",
      model: "builtin:playbook",
      modelOptions: { chunkDelayMs: 20 },
      playbook: {
        rules: [
          { when: { reason: "toolResult" }, reply: "Booked for {{observation.chosenOptionId}}, see you then." },
          { when: { textPattern: "^book" }, tools: [{ name: "ask_user", args: { question: "Which day?", options: [{ id: "mon", label: "Monday" }, { id: "tue", label: "Tuesday" }] } }], reply: "Let me ask you first." },
        ],
      },
    } as never)
  ).id;
  categoryId = ((await (await api.send("POST", "/v1/journal/categories", { name: "Gym" })).json()) as { id: string }).id;
  // Orchestrator control mode: every write waits for a person's approval (a tool_approval decision).
  plannerAgent = (
    await api.createAgent({
      kind: "coach",
      displayName: "Planner",
      model: "builtin:playbook",
      controlMode: "orchestrator",
      allowedCategoryIds: [categoryId],
      playbook: { rules: [{ when: { textPattern: "^plan" }, tools: [{ name: "create_task", args: { title: "Run 5k", categoryId } }], reply: "Planned: {{results.0.output.task.title}}" }] },
    } as never)
  ).id;
  // The visitor approves the planner's write in the widget: the policy lists it as visitor-approvable.
  const policy = await api.send("PUT", "/v1/policy", { visitorApprovableTools: ["create_task"] });
  if (!policy.ok) throw new Error(`PUT /v1/policy: HTTP ${policy.status}`);
  token = (await api.mintToken({ sub: "visitor-1", agents: [echoAgent, askingAgent, plannerAgent], ttlSeconds: 3600 })).token;
  profileDir = mkdtempSync(join(tmpdir(), "vigil-chromium-"));
  context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 900, height: 760 } });
  context.on("request", (request) => {
    const url = new URL(request.url());
    if (!url.pathname.startsWith("/v1/")) return;
    const headers = request.headers();
    apiRequests.push({ method: request.method(), path: url.pathname, authorization: headers.authorization, lastEventId: headers["last-event-id"] });
  });
});

afterAll(async () => {
  await context?.close().catch(() => undefined);
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  await server?.dispose();
});

async function openChat(agentId: string): Promise<Page> {
  const page = await context.newPage();
  page.on("pageerror", (error) => console.error("page error:", error));
  await page.goto(`${server.url}/demo#agent=${agentId}&token=${token}`);
  await page.locator("vigil-chat .status", { hasText: "Connected" }).waitFor({ timeout: UI_TIMEOUT });
  return page;
}

async function say(page: Page, text: string): Promise<void> {
  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill(text);
  await input.press("Enter");
}

/** The transcript as the widget shows it: role and text of every message bubble, in order. */
async function bubbles(page: Page): Promise<string[]> {
  return page.locator("vigil-chat [data-type=message]").evaluateAll((nodes) => nodes.map((node) => `${node.getAttribute("data-role")}: ${node.childNodes[1]?.textContent ?? ""}`));
}

/** The conversation as the API stores it, oldest first, in the same shape. */
async function storedConversation(agentId: string): Promise<string[]> {
  // The widget's "default" session is the visitor's own (docs/decisions.md "Widget session isolation").
  const page = await api.listMessages(agentId, { sessionId: widgetSessionId("visitor-1"), limit: 200 });
  return page.data
    .filter((message) => ["user", "assistant", "observation"].includes(message.kind) && message.text)
    .reverse()
    .map((message) => `${message.kind === "observation" ? "note" : message.kind}: ${message.text}`);
}

describe("chat widget (<vigil-chat>, /widget.js, /demo) in Chromium", () => {
  it("serves /widget.js with an ETag and long-lived caching, and /demo", async () => {
    const script = await raw(`${server.url}/widget.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    const etag = script.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{20}"$/);
    expect(script.headers.get("cache-control")).toContain("max-age=86400");
    expect(script.text).toContain('customElements.define("vigil-chat"');
    const again = await raw(`${server.url}/widget.js`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    const versioned = await raw(`${server.url}/widget.js?v=${etag.slice(1, -1)}`);
    expect(versioned.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const demo = await raw(`${server.url}/demo`);
    expect(demo.status).toBe(200);
    expect(demo.text).toContain(`/widget.js?v=${etag.slice(1, -1)}`);
  });

  it("streams a reply token by token into the page", async () => {
    const page = await openChat(echoAgent);
    // Record every text the streaming bubble shows, as the DOM changes.
    await page.evaluate(() => {
      const root = document.querySelector("vigil-chat")!.shadowRoot!;
      const seen: string[] = [];
      (window as unknown as { drafts: string[] }).drafts = seen;
      new MutationObserver(() => {
        const draft = root.querySelector(".msg.draft");
        if (draft?.textContent && seen.at(-1) !== draft.textContent) seen.push(draft.textContent);
      }).observe(root.querySelector(".log")!, { subtree: true, childList: true, characterData: true });
    });
    const text = "one two three four five six seven eight nine ten";
    await say(page, text);
    const reply = page.locator("vigil-chat [data-role=assistant]", { hasText: `echo: ${text}` });
    await reply.waitFor({ timeout: UI_TIMEOUT });
    const drafts = await page.evaluate(() => (window as unknown as { drafts: string[] }).drafts);
    // Several partial states, each a longer prefix of the final reply.
    expect(drafts.length).toBeGreaterThanOrEqual(3);
    drafts.forEach((draft, index) => {
      expect(`echo: ${text}`.startsWith(draft)).toBe(true);
      if (index > 0) expect(draft.length).toBeGreaterThan(drafts[index - 1]!.length);
    });
    expect(drafts.at(-1)!.length).toBeLessThanOrEqual(`echo: ${text}`.length);
    expect(await page.locator("vigil-chat .msg.draft").count()).toBe(0);
    expect(await bubbles(page)).toEqual([`user: ${text}`, `assistant: echo: ${text}`]);
    await page.close();
  });

  it("renders ask_user as buttons; clicking one answers it and the agent continues", async () => {
    const page = await openChat(askingAgent);
    await say(page, "book a table for two");
    const question = page.getByRole("group", { name: "Which day?" });
    await question.waitFor({ timeout: UI_TIMEOUT });
    await page.locator("vigil-chat .tool", { hasText: "ask_user" }).waitFor({ timeout: UI_TIMEOUT });
    await question.getByRole("button", { name: "Tuesday" }).click();
    await page.locator("vigil-chat [data-role=assistant]", { hasText: "Booked for tue, see you then." }).waitFor({ timeout: UI_TIMEOUT });
    await expect.poll(() => question.getAttribute("data-status"), { timeout: UI_TIMEOUT }).toBe("resolved");
    expect(await question.getByRole("button", { name: "Monday" }).isDisabled()).toBe(true);
    mkdirSync(join(REPO_ROOT, "test-results"), { recursive: true });
    await page.screenshot({ path: join(REPO_ROOT, "test-results", "widget-decision.png"), fullPage: true });
    const resolved = (await (await api.send("GET", "/v1/decisions?status=resolved")).json()) as { data: Array<{ agentId: string; resolution: Record<string, unknown> }> };
    expect(resolved.data.find((decision) => decision.agentId === askingAgent)?.resolution).toMatchObject({ resolutionType: "choose_option", chosenOptionId: "tue" });
    await page.close();
  });

  it("renders a tool approval generically; approving it lets the tool run and the agent finish", async () => {
    const page = await openChat(plannerAgent);
    await say(page, "plan my week");
    const approval = page.getByRole("group", { name: "Allow create_task?" });
    await approval.waitFor({ timeout: UI_TIMEOUT });
    // The event opens it at once; the listed decision then adds the call's arguments.
    await approval.locator(".detail", { hasText: "Run 5k" }).waitFor({ timeout: UI_TIMEOUT });
    await approval.getByRole("button", { name: "Approve" }).click();
    await page.locator("vigil-chat [data-role=assistant]", { hasText: "Planned: Run 5k" }).waitFor({ timeout: UI_TIMEOUT });
    await expect.poll(() => approval.getAttribute("data-status"), { timeout: UI_TIMEOUT }).toBe("resolved");
    await page.locator("vigil-chat .tool[data-status=ok]", { hasText: "create_task" }).waitFor({ timeout: UI_TIMEOUT });
    const tasks = (await (await api.send("GET", `/v1/journal/tasks?categoryId=${categoryId}`)).json()) as { data: Array<{ title: string }> };
    expect(tasks.data.map((task) => task.title)).toEqual(["Run 5k"]);
    await page.close();
  });

  it("after a dropped connection it resumes with Last-Event-ID: nothing lost, nothing twice", async () => {
    const page = await openChat(echoAgent);
    const before = await bubbles(page);
    expect(before).toEqual(await storedConversation(echoAgent));
    const resumesBefore = apiRequests.filter((request) => request.path.endsWith("/events") && request.lastEventId !== undefined).length;

    // The page goes offline and the server restarts (Chromium's offline mode alone keeps an open stream): the stream drops for sure.
    await context.setOffline(true);
    await server.restart();
    await page.locator("vigil-chat .status", { hasText: "Reconnecting" }).waitFor({ timeout: UI_TIMEOUT });
    // While the page is cut off, the conversation goes on (another client, in the visitor's own session).
    for (const text of ["while you were away", "and once more"]) {
      const { runKey } = await api.sendMessage(echoAgent, { text, sessionId: widgetSessionId("visitor-1") });
      expect((await api.waitForRun(echoAgent, runKey)).status).toBe("completed");
    }
    await context.setOffline(false);

    await page.locator("vigil-chat [data-role=assistant]", { hasText: "echo: and once more" }).waitFor({ timeout: UI_TIMEOUT });
    await page.locator("vigil-chat .status", { hasText: "Connected" }).waitFor({ timeout: UI_TIMEOUT });
    // Then a live turn on the resumed stream.
    await say(page, "back online");
    await page.locator("vigil-chat [data-role=assistant]", { hasText: "echo: back online" }).waitFor({ timeout: UI_TIMEOUT });

    const after = await bubbles(page);
    expect(after).toEqual(await storedConversation(echoAgent));
    expect(after).toEqual([...before, "user: while you were away", "assistant: echo: while you were away", "user: and once more", "assistant: echo: and once more", "user: back online", "assistant: echo: back online"]);
    expect(new Set(after).size).toBe(after.length);
    const resumes = apiRequests.filter((request) => request.path.endsWith("/events") && request.lastEventId !== undefined);
    expect(resumes.length).toBeGreaterThan(resumesBefore);
    expect(Number(resumes.at(-1)!.lastEventId)).toBeGreaterThan(0);

    mkdirSync(join(REPO_ROOT, "test-results"), { recursive: true });
    await page.screenshot({ path: join(REPO_ROOT, "test-results", "widget.png"), fullPage: true });
    await page.close();
  });

  it("the pages used the widget token only, never an API key", () => {
    expect(apiRequests.length).toBeGreaterThan(5);
    for (const request of apiRequests) expect(request.authorization, `${request.method} ${request.path}`).toBe(`Bearer ${token}`);
  });
});
