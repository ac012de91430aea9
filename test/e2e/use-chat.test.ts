import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { build } from "esbuild";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VigilClient } from "../../src/client";
import { REPO_ROOT, type VigilServer } from "./harness";
import { sharedServer } from "./shared-server";

/**
 * `@ai-sdk/react`'s useChat in headless Chromium, on a page of another origin, against a real `wrangler dev`:
 * the page (test/pages/use-chat-page.tsx) is bundled with esbuild, nothing comes from a CDN.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--no-first-run", "--disable-sync"];

let server: VigilServer;
let api: VigilClient;
let apiKey: string;
let pageJs: string;
let profileDir: string;
let context: BrowserContext;
/** The app's own origin: a page server on another loopback port (Chromium lets loopback call loopback). */
let appServer: Server;
let appOrigin: string;
let pageHtml = "";

beforeAll(async () => {
  server = sharedServer();
  const tenant = await server.tenant("use-chat");
  api = tenant.client;
  apiKey = tenant.apiKey;
  const bundled = await build({
    entryPoints: [join(REPO_ROOT, "test", "pages", "use-chat-page.tsx")],
    bundle: true,
    format: "iife",
    platform: "browser",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    write: false,
    logLevel: "silent",
  });
  pageJs = bundled.outputFiles[0]!.text;
  appServer = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(pageHtml));
  await new Promise<void>((resolve) => appServer.listen(0, "127.0.0.1", resolve));
  appOrigin = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
  profileDir = mkdtempSync(join(tmpdir(), "vigil-usechat-"));
  context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await context?.close().catch(() => undefined);
  appServer?.close();
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
});

/** Opens the page on its own origin with the agent and token it should talk to. */
async function openChat(agentId: string, token: string) {
  const page = await context.newPage();
  // A failing page says why (a CORS refusal, a script error) in the test's output.
  page.on("console", (message) => void (message.type() === "error" && console.error("page:", message.text())));
  page.on("pageerror", (error) => console.error("page error:", error.message));
  const config = JSON.stringify({ url: server.url, agentId, token });
  pageHtml = `<!doctype html><div id="root"></div><script>var VIGIL = ${config};</script><script>${pageJs.replace(/<\/script/g, "<\\/script")}</script>`;
  await page.goto(`${appOrigin}/`);
  return page;
}

describe("useChat from @ai-sdk/react talks to a Vigil agent", () => {
  it("sends a message and renders the streamed reply", async () => {
    const agent = await api.createAgent({ kind: "coach", displayName: "Echo", model: "builtin:echo" } as never);
    const token = (await api.mintToken({ sub: "react-visitor", agents: [agent.id], ttlSeconds: 600 })).token;
    const page = await openChat(agent.id, token);
    await page.fill("#input", "hello from react");
    await page.click("#send");
    await page.locator(".message.assistant .text").filter({ hasText: "echo: hello from react" }).waitFor({ timeout: 30_000 });
    await page.locator("#status").filter({ hasText: "ready" }).waitFor();
    expect(await page.locator(".message.user .text").allTextContents()).toEqual(["hello from react"]);
    await page.close();
  });

  it("shows a tool approval, and the click resolves the agent's decision and renders the outcome", async () => {
    const category = (await (await api.send("POST", "/v1/journal/categories", { name: "Gym" })).json()) as { id: string };
    const agent = await api.createAgent({
      kind: "coach",
      displayName: "Planner",
      model: "builtin:playbook",
      controlMode: "orchestrator",
      allowedCategoryIds: [category.id],
      playbook: { rules: [{ when: { textPattern: "^plan" }, tools: [{ name: "create_task", args: { title: "Run 5k", categoryId: category.id } }], reply: "Planned: {{results.0.output.task.title}}" }] },
    } as never);
    const page = await openChat(agent.id, apiKey);
    await page.fill("#input", "plan my week");
    await page.click("#send");
    await page.locator("#approve").waitFor({ timeout: 30_000 });
    const pending = (await (await api.send("GET", `/v1/decisions?status=pending&agentId=${agent.id}`)).json()) as { data: Array<{ id: string }> };
    expect(pending.data).toHaveLength(1);
    await page.click("#approve");
    await page.locator(".message.assistant .text").filter({ hasText: "Planned: Run 5k" }).waitFor({ timeout: 30_000 });
    await page.locator(".tool.output-available").waitFor();
    const decision = (await (await api.send("GET", `/v1/decisions?agentId=${agent.id}`)).json()) as { data: Array<{ id: string; status: string }> };
    expect(decision.data).toEqual([expect.objectContaining({ id: pending.data[0]!.id, status: "resolved" })]);
    await page.close();
  });
});
