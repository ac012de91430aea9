import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clearOfPeriodEdge, DevServer, raw, type RawResponse } from "./harness";

const PER_KEY = 12;
const PER_AGENT = 3;

let server: DevServer;

beforeAll(async () => {
  server = await DevServer.start({ rateLimits: { requestsPerMinutePerKey: PER_KEY, turnsPerMinutePerAgent: PER_AGENT } });
});

afterAll(async () => {
  await server?.dispose();
});

/**
 * Sends requests until the first 429. Limits use fixed one-minute windows, so a run that straddles
 * a window boundary may get up to one extra window's worth before the 429.
 */
async function untilLimited(send: () => Promise<RawResponse<any>>, limit: number): Promise<{ accepted: number; limited: RawResponse<any> }> {
  for (let accepted = 0; accepted <= 2 * limit; accepted++) {
    const response = await send();
    if (response.status === 429) return { accepted, limited: response };
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
  }
  throw new Error(`no 429 after ${2 * limit + 1} requests`);
}

function expectRateLimited(response: RawResponse<any>): void {
  expect(response.status).toBe(429);
  expect(response.headers.get("content-type")).toContain("application/problem+json");
  expect(response.body).toMatchObject({ status: 429, code: "rate_limited" });
  const retryAfter = response.headers.get("retry-after");
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
}

describe("rate limits", () => {
  it("a key past its per-minute budget gets 429 with Retry-After; another key of the tenant is unaffected", async () => {
    const { client } = await server.tenant("per-key");
    const busy = await client.createKey({ name: "busy" });
    const calm = await client.createKey({ name: "calm" });
    // The binding's periods are aligned to the wall clock: the burst and the request after it that must still be
    // refused have to share one period, so a burst is not started in a period's last seconds.
    await clearOfPeriodEdge(60_000, 15_000);
    const { accepted, limited } = await untilLimited(() => raw(`${server.url}/v1/agents`, { headers: { authorization: `Bearer ${busy.key}` } }), PER_KEY);
    // A fresh key gets its whole budget (more only if a window boundary passed meanwhile).
    expect(accepted).toBeGreaterThanOrEqual(PER_KEY);
    expectRateLimited(limited);
    const again = await raw(`${server.url}/v1/agents`, { headers: { authorization: `Bearer ${busy.key}` } });
    expect(again.status).toBe(429);
    const other = await raw(`${server.url}/v1/agents`, { headers: { authorization: `Bearer ${calm.key}` } });
    expect(other.status).toBe(200);
  });

  it("an agent past its turns per minute gets 429 with Retry-After whichever key sends; other agents still take turns", async () => {
    const { client } = await server.tenant("per-agent");
    const keys = [await client.createKey({ name: "one" }), await client.createKey({ name: "two" })];
    const agents = [await client.createAgent({ kind: "coach", displayName: "Busy" }), await client.createAgent({ kind: "coach", displayName: "Idle" })];
    let turn = 0;
    const { accepted, limited } = await untilLimited(() => {
      const key = keys[turn % 2]!.key;
      turn++;
      return raw(`${server.url}/v1/agents/${agents[0]!.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ text: `turn ${turn}` }),
      });
    }, PER_AGENT);
    expect(accepted).toBeGreaterThanOrEqual(PER_AGENT);
    expectRateLimited(limited);
    // Both keys were well under their own budget: the limit that fired is the agent's.
    expect(turn).toBeLessThan(PER_KEY);
    const idle = await raw(`${server.url}/v1/agents/${agents[1]!.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys[1]!.key}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "still welcome" }),
    });
    expect(idle.status).toBe(202);
  });
});
