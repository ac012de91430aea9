import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
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

const open = (path: string, token: string) => SELF.fetch(`https://vigil.test${path}`, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });

describe("open event streams end with their credential", () => {
  it("a key revoked without passing through this isolate ends its streams at the next re-check (one cache TTL)", async () => {
    const { key, tenantId } = await createTenant();
    const agent = await createAgent(key);
    const made = await api("POST", "/v1/keys", { key, body: { name: "elsewhere" } });
    const stream = await open(`/v1/agents/${agent.id}/events`, made.body.key);
    expect(stream.status).toBe(200);
    const inDo = runInDurableObject as unknown as (stub: unknown, fn: (instance: unknown, state: DurableObjectState) => unknown) => Promise<unknown>;
    await inDo(env.TENANT.get(env.TENANT.idFromName(tenantId)), (_i, state) => state.storage.sql.exec("UPDATE api_keys SET revoked_at = ? WHERE id = ?", new Date().toISOString(), made.body.id));
    const frames = await readToEnd(stream);
    expect(frames.at(-1)).toMatchObject({ event: "stream.closed", data: { reason: "key_revoked" } });
  });
});
