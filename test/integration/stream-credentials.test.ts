import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { credentialTtlMs } from "../../src/http/credential-cache";
import { mintWidgetToken } from "../../src/http/jwt";
import { api, createAgent, createTenant, parseSse } from "./helpers";

/** Reads an open SSE response to its end (the server closes it), with a safety cap. */
async function readToEnd(response: Response, capMs = 20_000): Promise<ReturnType<typeof parseSse>> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const cap = new Promise<"cap">((resolve) => setTimeout(() => resolve("cap"), capMs));
  for (;;) {
    const chunk = await Promise.race([reader.read(), cap]);
    if (chunk === "cap") {
      await reader.cancel().catch(() => undefined);
      throw new Error(`the stream did not end; got: ${text}`);
    }
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  return parseSse(text);
}

const inDo = runInDurableObject as unknown as (stub: unknown, fn: (instance: unknown, state: DurableObjectState) => unknown) => Promise<unknown>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const open = (path: string, token: string) => SELF.fetch(`https://vigil.test${path}`, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });

describe("open event streams end with their credential", () => {
  it("an agent stream and a tenant stream opened with a key close with stream.closed {reason: key_revoked} when it is revoked", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key);
    const made = await api("POST", "/v1/keys", { key, body: { name: "watcher" } });
    const agentStream = await open(`/v1/agents/${agent.id}/events`, made.body.key);
    const tenantStream = await open("/v1/events/stream", made.body.key);
    expect([agentStream.status, tenantStream.status]).toEqual([200, 200]);
    expect((await api("DELETE", `/v1/keys/${made.body.id}`, { key })).status).toBe(200);
    for (const stream of [agentStream, tenantStream]) {
      const frames = await readToEnd(stream);
      expect(frames.at(-1)).toMatchObject({ event: "stream.closed", data: { type: "stream.closed", reason: "key_revoked" } });
    }
    // Reconnecting with it is refused.
    expect((await open(`/v1/agents/${agent.id}/events`, made.body.key)).status).toBe(401);
  });

  it("a key revoked without passing through this isolate ends its streams at the next re-check (one cache TTL)", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const made = await api("POST", "/v1/keys", { key, body: { name: "elsewhere" } });
    const stream = await open(`/v1/agents/${agent.id}/events`, made.body.key);
    expect(stream.status).toBe(200);
    await inDo(env.TENANT.get(env.TENANT.idFromName(tenantId)), (_i, state) => state.storage.sql.exec("UPDATE api_keys SET revoked_at = ? WHERE id = ?", new Date().toISOString(), made.body.id));
    const frames = await readToEnd(stream);
    expect(frames.at(-1)).toMatchObject({ event: "stream.closed", data: { reason: "key_revoked" } });
  });

  it("a key revoked elsewhere ends every open stream within one cache TTL, however another stream cached its grant", async () => {
    const ttlMs = credentialTtlMs(env);
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const made = await api("POST", "/v1/keys", { key, body: { name: "two-streams" } });
    const first = await open(`/v1/agents/${agent.id}/events`, made.body.key);
    await sleep(ttlMs * 0.9);
    // The second stream rides on grants the first one's re-checks keep caching.
    const second = await open(`/v1/agents/${agent.id}/events`, made.body.key);
    expect([first.status, second.status]).toEqual([200, 200]);
    await sleep(ttlMs * 0.2 + 100);
    await inDo(env.TENANT.get(env.TENANT.idFromName(tenantId)), (_i, state) => state.storage.sql.exec("UPDATE api_keys SET revoked_at = ? WHERE id = ?", new Date().toISOString(), made.body.id));
    const revokedAt = Date.now();
    const [closedFirst, closedSecond] = await Promise.all([first, second].map(async (stream) => (await readToEnd(stream), Date.now() - revokedAt)));
    expect(Math.max(closedFirst!, closedSecond!)).toBeLessThanOrEqual(ttlMs + 400);
  });

  it("an agent stream opened with a widget token closes with stream.closed {reason: token_expired} when the token expires", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    // Long enough to open the stream before it expires on a loaded machine (exp has whole-second resolution).
    const { token } = await mintWidgetToken(env.VIGIL_MASTER_KEY, { sub: "visitor-1", tid: tenantId, agents: [agent.id], scope: ["agents:read", "agents:write"] }, 6);
    const stream = await open(`/v1/agents/${agent.id}/events`, token);
    expect(stream.status).toBe(200);
    const frames = await readToEnd(stream);
    expect(frames.at(-1)).toMatchObject({ event: "stream.closed", data: { reason: "token_expired" } });
    expect((await open(`/v1/agents/${agent.id}/events`, token)).status).toBe(401);
  });
});
