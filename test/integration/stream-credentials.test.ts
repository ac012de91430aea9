import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
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
