import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { credentialTtlMs } from "../../src/http/credential-cache";
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
});
