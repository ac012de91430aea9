import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendThroughDoor, type EgressRecord } from "../../src/egress";

const ROOT = join(import.meta.dirname, "..", "..");

/**
 * Code that never runs in the Worker and may call `fetch` itself: the chat widget (runs in the
 * visitor's browser), the operator console (runs in the operator's browser), the typed API client (runs in the caller's Node or browser), and the one-line
 * script of the /docs page (a string the browser executes).
 */
const BROWSER_CODE = ["src/widget/", "src/console/", "src/client/"];
const BROWSER_SNIPPETS = [{ file: "src/routes/platform/docs.ts", text: 'fetch("/v1/openapi.json")' }];
const DOOR = "src/egress/door.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.(ts|mts|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** Comments removed, so that prose mentioning fetch() is not a call. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

describe("the one egress door", () => {
  it("no Worker code outside src/egress/door.ts calls fetch or reaches the runtime's fetch another way", () => {
    const offenders: string[] = [];
    for (const path of sourceFiles(join(ROOT, "src"))) {
      const file = relative(ROOT, path).split("\\").join("/");
      if (file === DOOR || BROWSER_CODE.some((prefix) => file.startsWith(prefix))) continue;
      let text = code(readFileSync(path, "utf8"));
      for (const snippet of BROWSER_SNIPPETS) if (snippet.file === file) text = text.split(snippet.text).join("");
      // `app.fetch(` / `stub.fetch(` dispatch in-process; a bare or global `fetch` goes to the network.
      const calls = [...text.matchAll(/(?<![.\w$])fetch\s*\(|globalThis\.fetch|self\.fetch|\bfetch\.(call|apply|bind)\b|=\s*fetch\b/g)];
      for (const call of calls) offenders.push(`${file}: ${text.slice(Math.max(0, call.index! - 40), call.index! + 30).replace(/\s+/g, " ")}`);
    }
    expect(offenders).toEqual([]);
  });

  it("the grep would catch a stray call (the pattern is not vacuous)", () => {
    const pattern = /(?<![.\w$])fetch\s*\(|globalThis\.fetch/;
    expect(pattern.test('await fetch("https://x")')).toBe(true);
    expect(pattern.test("const f = globalThis.fetch;")).toBe(true);
    expect(pattern.test("app.fetch(request, env)")).toBe(false);
  });
});

describe("sendThroughDoor", () => {
  let server: Server;
  let base: string;
  let host: string;
  const hits: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      const hop = /^\/hop\/(\d+)$/.exec(req.url ?? "");
      if (hop) {
        const n = Number(hop[1]);
        res.writeHead(302, { location: n > 0 ? `/hop/${n - 1}` : "/done" }).end();
      } else if (req.url === "/away") res.writeHead(302, { location: "https://elsewhere.example.com/x" }).end();
      else res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    base = `http://${host}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const send = (path: string, extra: { method?: string; mode?: "local" | "deployed"; hosts?: string[] } = {}) => {
    const records: EgressRecord[] = [];
    const outcome = sendThroughDoor({
      url: `${base}${path}`,
      purpose: "jwks",
      allowedHosts: extra.hosts ?? [host],
      mode: extra.mode ?? "local",
      init: { method: extra.method ?? "GET" },
      record: (entry) => records.push(entry),
    });
    return { outcome, records };
  };

  it("sends to an allowed loopback host in local mode and records the request", async () => {
    const { outcome, records } = send("/ok");
    const result = await outcome;
    expect(result.ok && result.response.status).toBe(200);
    expect(records).toEqual([expect.objectContaining({ purpose: "jwks", method: "GET", host, outcome: "sent", status: 200, redirects: 0 })]);
  });

  it("refuses before sending: a host off the allowlist, or loopback in deployed mode", async () => {
    hits.length = 0;
    const off = send("/ok", { hosts: ["127.0.0.1:1"] });
    expect(await off.outcome).toMatchObject({ ok: false, code: "network_denied", sent: false });
    const deployed = send("/ok", { mode: "deployed" });
    const refused = await deployed.outcome;
    expect(refused).toMatchObject({ ok: false, code: "network_denied", sent: false });
    expect(!refused.ok && refused.message).toMatch(/deployed mode/);
    expect(deployed.records).toEqual([expect.objectContaining({ outcome: "denied", status: null })]);
    expect(hits).toEqual([]);
  });

  it("follows at most three redirects on a GET, each hop re-checked", async () => {
    hits.length = 0;
    const within = send("/hop/2");
    const ok = await within.outcome;
    expect(ok.ok && ok.response.status).toBe(200);
    expect(within.records).toEqual([expect.objectContaining({ outcome: "sent", status: 200, redirects: 3 })]);
    const beyond = await send("/hop/3").outcome;
    expect(beyond).toMatchObject({ ok: false, code: "network_denied", sent: true, message: expect.stringMatching(/more than 3 redirects/) });
  });

  it("never follows a redirect off the allowlist, and never replays a POST elsewhere", async () => {
    hits.length = 0;
    expect(await send("/away").outcome).toMatchObject({ ok: false, code: "network_denied", sent: true });
    const post = await send("/hop/1", { method: "POST" }).outcome;
    expect(post.ok && post.response.status).toBe(302);
    expect(hits).toEqual(["GET /away", "POST /hop/1"]);
  });
});
