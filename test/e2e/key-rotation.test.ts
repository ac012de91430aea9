/**
 * Rotating the master key (docs/operations.md "Rotating the master key"): a real `wrangler dev` is restarted on the
 * same state with a new `VIGIL_MASTER_KEY` and the old one in `VIGIL_MASTER_KEY_PREVIOUS`, while turns keep arriving.
 * Everything issued before still opens or verifies — the stored provider secret (at a scripted provider), a widget
 * token, a trigger URL (and provisioning returns the same one), a webhook source's signing secret — and nothing sent
 * during the rotation is lost or refused. Re-sealed on use, the provider secret still works once the old key is dropped.
 */
import { createHmac, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, ScriptedOpenAI } from "../support/scripted-openai";
import { DevServer, raw } from "./harness";

let server: DevServer;
let provider: ScriptedOpenAI;
beforeAll(async () => {
  provider = await ScriptedOpenAI.start();
  server = await DevServer.start();
});
afterAll(async () => {
  await server?.dispose();
  await provider?.close();
});

const vigilSignature = (secret: string, body: string, t = Math.floor(Date.now() / 1000)) => `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;

describe("master key rotation", () => {
  it("after a restart with a new keyring, secrets, tokens, trigger URLs and signing secrets issued before still work; nothing is lost", async () => {
    const { client, apiKey } = await server.tenant("rotation");
    const call = async (method: string, path: string, body?: unknown, bearer = apiKey) => {
      const response = await raw(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return response as { status: number; body: any; text: string };
    };
    const providerKey = `sk-rot-${randomBytes(8).toString("hex")}`;
    const secret = await call("POST", "/v1/providers/secrets", { provider: "local", apiKey: providerKey });
    expect(secret.status, secret.text).toBe(201);
    expect((await call("PUT", "/v1/policy", { providers: [{ id: "local", kind: "openai-compatible", baseUrl: provider.baseUrl, secretRefId: secret.body.id, policyVersion: "p1", models: ["m1"], timeoutMs: 15_000 }] })).status).toBe(200);
    expect((await call("POST", "/v1/providers/consents", { provider: "local", model: "m1", policyVersion: "p1" })).status).toBe(201);
    const remote = await client.createAgent({ kind: "coach", displayName: "Remote", model: "openai-compatible:local/m1" } as never);
    const echo = await client.createAgent({ kind: "coach", displayName: "Echo" } as never);
    const widget = (await call("POST", "/v1/tokens", { sub: "visitor", agents: [echo.id], ttlSeconds: 3600 })).body.token as string;
    const trigger = (await call("POST", `/v1/agents/${echo.id}/trigger`, { action: "provision" })).body;
    const source = (await call("POST", "/v1/webhook-sources", { name: "ci", scheme: "vigil", tokenMapping: { semanticKey: "DEPLOY", entityIdFrom: "body:service" } })).body;

    // Turns keep arriving while the server restarts with the rotated keyring: each is retried until accepted.
    const sent: string[] = [];
    let rotating = true;
    const traffic = (async () => {
      for (let i = 0; rotating || i < 3; i++) {
        for (;;) {
          const answer = await call("POST", `/v1/agents/${echo.id}/messages`, { text: `turn ${i}` }).catch(() => null);
          if (answer?.status === 202) {
            sent.push(answer.body.runKey);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    })();
    const oldKey = server.masterKey;
    const newKey = randomBytes(32).toString("base64");
    server.setVars({ VIGIL_MASTER_KEY: newKey, VIGIL_MASTER_KEY_PREVIOUS: oldKey });
    await server.restart();
    rotating = false;
    await traffic;
    for (const runKey of sent) expect((await client.waitForRun(echo.id, runKey, { timeoutMs: 90_000 })).status).toBe("completed");

    // The widget token minted under the old key, the trigger URL, the source's signing secret.
    expect((await call("GET", `/v1/agents/${echo.id}`, undefined, widget)).status).toBe(200);
    expect((await call("POST", `/v1/agents/${echo.id}/trigger`, { action: "provision" })).body.url).toBe(trigger.url);
    const hooked = await raw(trigger.url, { method: "POST", headers: { "content-type": "application/json", "x-vigil-delivery": "d-1" }, body: "{}" });
    expect(hooked.status, hooked.text).toBe(202);
    const body = JSON.stringify({ service: "api" });
    const signed = await raw(source.url, { method: "POST", headers: { "content-type": "application/json", "vigil-signature": vigilSignature(source.secret, body), "x-vigil-delivery": "s-1" }, body });
    expect(signed.status, signed.text).toBe(202);

    // The stored provider secret still reaches its provider (and is re-sealed under the new key on that use).
    provider.enqueue(reply.text(["after rotation"]));
    const { runKey } = await client.sendMessage(remote.id, { text: "hello" });
    expect((await client.waitForRun(remote.id, runKey, { timeoutMs: 90_000 })).status).toBe("completed");
    expect(provider.requests.at(-1)!.headers.authorization).toBe(`Bearer ${providerKey}`);

    // The old key dropped: the re-sealed secret opens under the new key alone; new widget tokens verify.
    server.setVars({ VIGIL_MASTER_KEY_PREVIOUS: null });
    await server.restart();
    provider.enqueue(reply.text(["new key only"]));
    const again = await client.sendMessage(remote.id, { text: "hello again" });
    expect((await client.waitForRun(remote.id, again.runKey, { timeoutMs: 90_000 })).status).toBe("completed");
    expect(provider.requests.at(-1)!.headers.authorization).toBe(`Bearer ${providerKey}`);
    const fresh = (await call("POST", "/v1/tokens", { sub: "visitor", agents: [echo.id], ttlSeconds: 600 })).body.token as string;
    expect((await call("GET", `/v1/agents/${echo.id}`, undefined, fresh)).status).toBe(200);
  });
});
