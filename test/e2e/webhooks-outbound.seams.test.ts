import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TenantEvent, VigilClient, WebhookDelivery } from "../../src/client";
import { leafPaths, webhookAllowlist, webhookOperation } from "../../src/core/egress/need-to-know-webhooks";
import { verifyWebhookSignature } from "../../src/core/egress/webhook-signature";
import { DevServer, eventually, LocalReceiver } from "./harness";

/** Small retry schedule for this server only (honoured because this server turns on the `settings` seam). */
const MAX_ATTEMPTS = 3;

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real webhook receiver on 127.0.0.1: `/flaky` answers 500, 500, then 200; `/down` always 503; `/ok` always 204. */
class Receiver extends LocalReceiver {
  readonly requests: Received[] = [];
  private flakyCalls = 0;

  protected answer(request: IncomingMessage, body: string, response: ServerResponse): void {
    const path = request.url ?? "/";
    this.requests.push({ path, headers: request.headers, body });
    if (path === "/flaky") response.statusCode = ++this.flakyCalls <= 2 ? 500 : 200;
    else if (path === "/down") response.statusCode = 503;
    else response.statusCode = 204;
    response.end(path === "/down" ? "upstream broken: do not store me" : "");
  }

  at(path: string): Received[] {
    return this.requests.filter((request) => request.path === path);
  }
}

let server: DevServer;
let client: VigilClient;
let tenantId: string;
let receiver: Receiver;
let receiverUrl: string;

beforeAll(async () => {
  receiver = new Receiver();
  receiverUrl = await receiver.listen();
  server = await DevServer.start({ vars: { VIGIL_FAULTS: "settings,dumps", VIGIL_OUTBOUND_RETRY: JSON.stringify({ maxAttempts: MAX_ATTEMPTS, baseDelaySeconds: 1, maxDelaySeconds: 2 }) } });
  ({ client, tenantId } = await server.tenant("webhooks"));
});

afterAll(async () => {
  await server?.dispose();
  await receiver?.close();
});

async function settled(webhookId: string, status: WebhookDelivery["status"]): Promise<WebhookDelivery> {
  return eventually(async () => {
    const page = await client.webhooks.deliveries(webhookId);
    return page.data.find((delivery) => delivery.status === status);
  }, 60_000, 250);
}

/** Every row of the tenant's SQLite (test seam, operator only). */
async function tenantTables(): Promise<Record<string, Array<Record<string, unknown>>>> {
  const response = await fetch(`${server.url}/__debug/tenants/${tenantId}/dump`, { headers: { authorization: `Bearer ${server.adminToken}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { tables: Record<string, Array<Record<string, unknown>>> }).tables;
}

function assertAllowlisted(body: string): void {
  const parsed = JSON.parse(body) as { type: string; data: Record<string, unknown> };
  const allowlist = webhookAllowlist(webhookOperation(parsed))!;
  expect(allowlist).not.toBeNull();
  for (const path of leafPaths(parsed)) expect(allowlist.has(path), `${path} is not on the ${parsed.type} allowlist`).toBe(true);
}

describe("outbound webhooks against a real receiver", () => {
  it("retries a failing receiver with backoff until it answers 200, signs every attempt, sends only allowlisted fields, and the tenant stream saw the same event", async () => {
    const flaky = await client.webhooks.create({ url: `${receiverUrl}/flaky`, eventTypes: ["run.completed"], description: "flaky receiver" });
    const down = await client.webhooks.create({ url: `${receiverUrl}/down`, eventTypes: ["run.*"] });
    const messages = await client.webhooks.create({ url: `${receiverUrl}/ok`, eventTypes: ["message.appended"] });
    expect(flaky.secret).toMatch(/^whsec_/);
    expect(JSON.stringify(await client.webhooks.list())).not.toContain(flaky.secret);

    const stream = client.events.stream();
    const agent = await client.createAgent({ kind: "coach", displayName: "Coach" });
    const { runKey } = await client.sendMessage(agent.id, { text: "confidential training plan" });
    await client.waitForRun(agent.id, runKey);

    // Flaky: three attempts, the last one delivered, all logged.
    const delivered = await settled(flaky.id, "delivered");
    expect(delivered).toMatchObject({ eventType: "run.completed", attempts: 3, errorCode: null });
    expect(delivered.attemptLog.map((entry) => [entry.attempt, entry.outcome, entry.httpStatus])).toEqual([
      [1, "failed", 500],
      [2, "failed", 500],
      [3, "delivered", 200],
    ]);
    const sent = receiver.at("/flaky");
    expect(sent).toHaveLength(3);
    // One delivery id and one body for every attempt (receivers dedupe on the id); a fresh signature each time.
    expect(new Set(sent.map((request) => request.headers["vigil-delivery-id"]))).toEqual(new Set([delivered.id]));
    expect(new Set(sent.map((request) => request.body)).size).toBe(1);
    expect(sent.map((request) => request.headers["vigil-attempt"])).toEqual(["1", "2", "3"]);
    for (const request of sent) {
      const verified = await verifyWebhookSignature({ scheme: "vigil", headers: new Headers(request.headers as Record<string, string>), rawBody: request.body, secrets: flaky.secret, nowMs: Date.now() });
      expect(verified.ok).toBe(true);
      const forged = await verifyWebhookSignature({ scheme: "vigil", headers: new Headers(request.headers as Record<string, string>), rawBody: request.body, secrets: messages.secret, nowMs: Date.now() });
      expect(forged.ok).toBe(false);
      expect(request.headers["vigil-event-type"]).toBe("run.completed");
      expect(request.headers["content-type"]).toBe("application/json");
    }
    const body = JSON.parse(sent[0]!.body);
    expect(body).toEqual({ id: delivered.id, type: "run.completed", createdAt: expect.any(String), eventSeq: delivered.eventSeq, agentId: agent.id, runKey, data: { runKey, status: "completed", errorCode: null } });
    assertAllowlisted(sent[0]!.body);
    expect(sent[0]!.body).not.toContain("confidential");

    // Messages: the user's words never leave; what the agent says to people does; nothing off the list either way.
    const messageBodies = await eventually(async () => {
      const bodies = receiver.at("/ok").map((request) => JSON.parse(request.body));
      return bodies.some((b) => b.data.message.kind === "assistant") && bodies.some((b) => b.data.message.kind === "user") ? bodies : undefined;
    }, 30_000);
    for (const request of receiver.at("/ok")) assertAllowlisted(request.body);
    const user = messageBodies.find((b) => b.data.message.kind === "user");
    const reply = messageBodies.find((b) => b.data.message.kind === "assistant");
    expect(user.data.message.text).toBeUndefined();
    expect(JSON.stringify(user)).not.toContain("confidential");
    expect(reply.data.message.text).toBe("echo: confidential training plan");

    // The same run.completed is on the tenant stream, under the seq the delivery names.
    const seen: TenantEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.seq === delivered.eventSeq) break;
    }
    stream.close();
    const completed = seen.find((event) => event.seq === delivered.eventSeq)!;
    expect(completed).toMatchObject({ type: "run.completed", agentId: agent.id, runKey });
    expect(seen.some((event) => event.type === "text.delta")).toBe(false);

    // Down: every attempt fails, then the delivery is dead after the limit.
    const dead = await settled(down.id, "dead");
    expect(dead.attempts).toBe(MAX_ATTEMPTS);
    expect(dead.errorCode).toBe("http_503");
    expect(dead.attemptLog.map((entry) => entry.outcome)).toEqual(Array(MAX_ATTEMPTS).fill("failed"));
    const deadAttempts = receiver.at("/down").filter((request) => request.headers["vigil-delivery-id"] === dead.id);
    expect(deadAttempts).toHaveLength(MAX_ATTEMPTS);
    expect(JSON.stringify(await client.webhooks.deliveries(down.id))).not.toContain("do not store me");

    // The signing secrets are stored sealed only, and receivers' answers are not stored at all.
    const dump = JSON.stringify(await tenantTables());
    for (const secret of [flaky.secret, down.secret, messages.secret]) expect(dump).not.toContain(secret);
    expect(dump).not.toContain("do not store me");
  });

  it("stops delivering to a deleted endpoint and answers 404 for it afterwards", async () => {
    const gone = await client.webhooks.create({ url: `${receiverUrl}/gone`, eventTypes: ["lifecycle.changed"] });
    const live = await client.webhooks.create({ url: `${receiverUrl}/ok`, eventTypes: ["lifecycle.changed"] });
    expect((await client.webhooks.get(gone.id)).id).toBe(gone.id);
    await client.webhooks.delete(gone.id);
    await expect(client.webhooks.get(gone.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.webhooks.deliveries(gone.id)).rejects.toMatchObject({ status: 404 });
    expect((await client.webhooks.list()).data.map((endpoint) => endpoint.id)).not.toContain(gone.id);

    const agent = await client.createAgent({ kind: "coach", displayName: "Later" });
    // Once the live endpoint has the new agent's lifecycle.changed, the deleted one would have had it too.
    await eventually(async () => receiver.at("/ok").some((request) => JSON.parse(request.body).agentId === agent.id && request.headers["vigil-event-type"] === "lifecycle.changed"), 30_000);
    // The receiver sees the request before the server has read its answer and logged the delivery: wait for the log.
    await eventually(async () => (await client.webhooks.deliveries(live.id)).data.some((delivery) => delivery.status === "delivered"), 30_000);
    expect(receiver.at("/gone")).toEqual([]);
    // Matching happens in the same transaction that records the event: the deleted endpoint got no delivery row at all.
    const rows = (await tenantTables()).webhook_deliveries!;
    expect(rows.some((row) => row.endpoint_id === live.id)).toBe(true);
    expect(rows.filter((row) => row.endpoint_id === gone.id)).toEqual([]);
  });
});
