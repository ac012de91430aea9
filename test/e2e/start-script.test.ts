import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VigilApiError, VigilClient } from "../../src/client";
import { collectSse, delay, freePort, snapshotCheckout } from "./harness";
import { interrupt, refuseStaleNodeModules, startScript, waitForBanner, type StartedScript } from "./start-process";

/**
 * `npm start` runs `node scripts/start.mjs`. It is exercised in a throwaway copy of the checkout
 * (node_modules linked, no .dev.vars, no .wrangler/) — a fresh clone — so the repo's stay untouched.
 */
let checkout: string;
let port: number;

beforeAll(async () => {
  refuseStaleNodeModules();
  checkout = snapshotCheckout();
  port = await freePort();
});

afterAll(() => {
  for (const pid of processesIn(checkout)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  rmSync(checkout, { recursive: true, force: true });
});

/**
 * Waits until no process runs inside `dir`: the script SIGKILLs wrangler's group on its way out, and a killed
 * workerd can take a moment to leave /proc. One that is still there after 10 s is reported.
 */
async function processesLeftIn(dir: string): Promise<number[]> {
  for (let waited = 0; waited < 10_000 && processesIn(dir).length > 0; waited += 100) await delay(100);
  return processesIn(dir);
}

/** Processes whose working directory is inside `dir` (Linux /proc); wrangler and workerd run there. */
function processesIn(dir: string): number[] {
  if (!existsSync("/proc")) return [];
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push(Number(entry));
    } catch {
      // exited or not ours
    }
  }
  return found;
}

function readDemo(): { tenantId: string; apiKey: string; agentId: string; coachAgentId: string; coachCategoryId: string; createdAt: string } {
  return JSON.parse(readFileSync(join(checkout, ".wrangler", "demo.json"), "utf8"));
}

/** Runs a printed curl line with fetch: `curl [-s|-N] [-X M] URL [-H 'k: v']... [-d 'body']`. */
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
    } else if (token === "-d") {
      body = tokens[++i];
      if (method === "GET") method = "POST";
    } else if (token === "-s" || token === "-N") continue;
    else if (token.startsWith("http")) url = token;
    else throw new Error(`unexpected curl token ${token}`);
  }
  return fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
}

function curlLine(banner: string, after: string): string {
  const lines = banner.split("\n");
  const index = lines.findIndex((line) => line.includes(after));
  expect(index, `banner has "${after}"`).toBeGreaterThanOrEqual(0);
  return lines[index + 1]!.trim();
}

describe("npm start (scripts/start.mjs)", () => {
  let firstDemo: ReturnType<typeof readDemo>;
  let devVars: string;

  it("on a fresh checkout: generates .dev.vars, seeds the demo, prints URL, key, agent and working curl lines; Ctrl-C stops everything", async () => {
    expect(existsSync(join(checkout, ".dev.vars"))).toBe(false);
    const run = startScript(checkout, port);
    const banner = await waitForBanner(run);
    try {
      devVars = readFileSync(join(checkout, ".dev.vars"), "utf8");
      const admin = /^VIGIL_ADMIN_TOKEN=(.+)$/m.exec(devVars)?.[1];
      const master = /^VIGIL_MASTER_KEY=(.+)$/m.exec(devVars)?.[1];
      expect(admin?.length).toBeGreaterThanOrEqual(32);
      expect(Buffer.from(master ?? "", "base64")).toHaveLength(32);

      firstDemo = readDemo();
      const url = `http://127.0.0.1:${port}`;
      expect(banner).toContain(url);
      expect(banner).toContain(firstDemo.apiKey);
      expect(banner).toContain(firstDemo.agentId);
      expect(banner).toContain("Seeded");
      expect(banner).not.toContain("Request.cf");

      const client = new VigilClient({ baseUrl: url, token: firstDemo.apiKey });
      await expect(client.getAgent(firstDemo.agentId)).resolves.toMatchObject({ displayName: "Demo agent", lifecycle: "active", config: { modelId: "builtin:echo" } });
      await expect(new VigilClient({ baseUrl: url, token: admin! }).createTenant({ name: "operator check" })).resolves.toMatchObject({ tenant: { name: "operator check" } });
      // npm start runs in local mode: a local model server (Ollama) is a valid provider endpoint.
      const ollama = await fetch(`${url}/v1/policy`, {
        method: "PUT",
        headers: { authorization: `Bearer ${firstDemo.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ providers: [{ id: "ollama", kind: "openai-compatible", baseUrl: "http://localhost:11434/v1", policyVersion: "local", models: ["llama3.2"] }] }),
      });
      expect(ollama.status, await ollama.clone().text()).toBe(200);

      const send = curlLine(banner, "Send a message");
      expect(send).toMatch(/^curl .*-X POST .*\/messages/);
      const sent = await runCurl(send);
      expect(sent.status).toBe(202);
      const { runKey } = (await sent.json()) as { runKey: string };
      await expect(client.waitForRun(firstDemo.agentId, runKey)).resolves.toMatchObject({ status: "completed" });

      const streamLine = curlLine(banner, "Stream a reply");
      expect(streamLine).toMatch(/^curl -N .*accept: text\/event-stream/);
      const streamed = await collectSse(await runCurl(streamLine), (frames) => frames.some((f) => f.event === "run.completed"));
      expect(streamed.filter((f) => f.event === "text.delta").map((f) => f.data.data.delta).join("")).toMatch(/^echo: /);
      expect(streamed.at(-1)?.event).toBe("run.completed");

      const follow = curlLine(banner, "Follow the event stream");
      expect(follow).toMatch(/^curl -N .*\/events/);
      const events = await collectSse(await runCurl(follow), (frames) => frames.filter((f) => f.event === "run.completed").length >= 2);
      expect(events.filter((f) => f.event === "run.completed")).toHaveLength(2);
    } finally {
      expect(await interrupt(run)).toBe(0);
    }
    expect(await processesLeftIn(checkout)).toEqual([]);
    expect(run.output()).toContain("Stopping");
  });

  it("a second start reuses the demo and the secrets instead of seeding again", async () => {
    const run = startScript(checkout, port);
    const banner = await waitForBanner(run);
    try {
      expect(banner).toContain("Using the demo tenant");
      expect(banner).not.toContain("Seeded");
      expect(banner).toContain(firstDemo.apiKey);
      expect(readDemo()).toEqual(firstDemo);
      expect(readFileSync(join(checkout, ".dev.vars"), "utf8")).toBe(devVars);
      const client = new VigilClient({ baseUrl: `http://127.0.0.1:${port}`, token: firstDemo.apiKey });
      const agents = await client.listAgents();
      // The echo agent and the demo coach (test/e2e/demo-coach.test.ts walks through the coach), no more.
      expect(agents.data.map((agent) => agent.id).sort()).toEqual([firstDemo.agentId, firstDemo.coachAgentId].sort());
      // The conversation of the first start is still there.
      expect((await client.listMessages(firstDemo.agentId)).data.length).toBeGreaterThanOrEqual(4);
    } finally {
      expect(await interrupt(run)).toBe(0);
    }
    expect(await processesLeftIn(checkout)).toEqual([]);
  });

  it("after the state is wiped, the stale demo key is detected and a new demo is seeded", async () => {
    rmSync(join(checkout, ".wrangler", "state"), { recursive: true, force: true });
    const run = startScript(checkout, port);
    const banner = await waitForBanner(run);
    try {
      expect(banner).toContain("seeding it again");
      const demo = readDemo();
      expect(demo.apiKey).not.toBe(firstDemo.apiKey);
      expect(banner).toContain(demo.apiKey);
      const url = `http://127.0.0.1:${port}`;
      await expect(new VigilClient({ baseUrl: url, token: demo.apiKey }).getAgent(demo.agentId)).resolves.toMatchObject({ displayName: "Demo agent" });
      const stale = await new VigilClient({ baseUrl: url, token: firstDemo.apiKey }).listAgents().catch((error: unknown) => error);
      expect(stale).toBeInstanceOf(VigilApiError);
      expect((stale as VigilApiError).status).toBe(401);
    } finally {
      expect(await interrupt(run)).toBe(0);
    }
  });

  it("refuses clearly when the port is taken, without starting anything", async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    try {
      const run = startScript(checkout, port);
      const code = await Promise.race([run.exited, delay(60_000).then(() => "timeout" as const)]);
      expect(code).toBe(1);
      expect(run.output()).toContain(`port ${port}`);
      expect(run.output()).toContain("PORT=");
      expect(await processesLeftIn(checkout)).toEqual([]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
