import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildWebhookPayload, guardWebhookBytes, leafPaths, pickPaths, webhookAllowlist, webhookOperation, WEBHOOK_EVENT_TYPES, type WebhookEventInput } from "../../src/core/egress/need-to-know-webhooks";

const base = (type: string, data: Record<string, unknown>): WebhookEventInput => ({
  deliveryId: "wd_1",
  type,
  createdAt: "2026-11-26T00:00:00.000Z",
  eventSeq: 7,
  agentId: "ag_1",
  runKey: "rk",
  data,
});

describe("outbound webhook NEED_TO_KNOW projection", () => {
  it("drops every field that is not on the event type's allowlist", () => {
    const built = buildWebhookPayload(base("run.completed", { runKey: "rk", status: "completed", errorCode: null, run: { trace: { attempts: [1] }, secret: "x" } }));
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(JSON.parse(built.body)).toEqual({ id: "wd_1", type: "run.completed", createdAt: "2026-11-26T00:00:00.000Z", eventSeq: 7, agentId: "ag_1", runKey: "rk", data: { runKey: "rk", status: "completed", errorCode: null } });
  });

  it("sends message text only for what the agent says to people", () => {
    const message = (kind: string) => ({ message: { id: "m1", agentId: "ag_1", threadId: "t", kind, text: "private words", content: { a: 1 }, metadata: { x: 1 }, createdAt: "2026-11-26T00:00:00.000Z" } });
    const user = buildWebhookPayload(base("message.appended", message("user")));
    const assistant = buildWebhookPayload(base("message.appended", message("assistant")));
    expect(user.ok && JSON.parse(user.body).data.message).toEqual({ id: "m1", threadId: "t", kind: "user", createdAt: "2026-11-26T00:00:00.000Z" });
    expect(assistant.ok && JSON.parse(assistant.body).data.message.text).toBe("private words");
    expect(user.ok && user.body.includes("private words")).toBe(false);
  });

  it("keeps tool arguments out of tool.called", () => {
    const built = buildWebhookPayload(base("tool.called", { operationId: "op", toolName: "create_task", step: 1, args: { title: "secret plan" } }));
    expect(built.ok && built.body.includes("secret plan")).toBe(false);
  });

  it("blocks (overshared_payload_blocked) a value whose shape is richer than the list allows", () => {
    const built = buildWebhookPayload(base("decision.requested", { decisionId: "d", kind: "ask_user", question: { text: "q", hidden: "leak" }, options: [] }));
    expect(built).toMatchObject({ ok: false, code: "overshared_payload_blocked", operation: "decision.requested", violations: ["data.question.hidden", "data.question.text"] });
  });

  it("copies option ids and labels of a decision, not unknown option fields", () => {
    const built = buildWebhookPayload(base("decision.requested", { decisionId: "d", kind: "ask_user", question: "q?", options: [{ id: "a", label: "A", internal: 1 }] }));
    expect(built.ok && JSON.parse(built.body).data.options).toEqual([{ id: "a", label: "A" }]);
  });

  it("the final guard reads the bytes: an added field is a violation, a policy version it does not know blocks all", () => {
    expect(guardWebhookBytes(JSON.stringify({ id: "x", type: "run.started", data: { runKey: "r" } }), "run.started").ok).toBe(true);
    expect(guardWebhookBytes(JSON.stringify({ id: "x", data: { runKey: "r", prompt: "p" } }), "run.started")).toMatchObject({ ok: false, violations: ["data.prompt"] });
    expect(guardWebhookBytes("not json", "run.started").ok).toBe(false);
    expect(guardWebhookBytes("{}", "run.started", "older-version").ok).toBe(false);
    expect(webhookAllowlist("no.such.type")).toBeNull();
  });

  it("only types with an allowlist are deliverable; variants are not types", () => {
    expect(WEBHOOK_EVENT_TYPES).toContain("run.completed");
    expect(WEBHOOK_EVENT_TYPES).not.toContain("message.appended:assistant");
    expect(WEBHOOK_EVENT_TYPES).not.toContain("text.delta");
    expect(webhookOperation({ type: "message.appended", data: { message: { kind: "assistant" } } })).toBe("message.appended:assistant");
  });

  it("property: whatever the event data, a delivered body's fields are a subset of its allowlist", () => {
    fc.assert(
      fc.property(fc.constantFrom(...WEBHOOK_EVENT_TYPES), fc.dictionary(fc.constantFrom("runKey", "status", "message", "question", "options", "state", "scope", "other"), fc.jsonValue()), (type, data) => {
        const built = buildWebhookPayload(base(type, data as Record<string, unknown>));
        if (!built.ok) return;
        const allow = webhookAllowlist(built.operation)!;
        for (const path of leafPaths(JSON.parse(built.body))) expect(allow.has(path)).toBe(true);
      }),
    );
  });

  it("leafPaths and pickPaths agree on paths", () => {
    const source = { a: { b: 1, c: [1, 2] }, d: [{ e: 1, f: 2 }], g: {} };
    expect(leafPaths(source).sort()).toEqual(["a.b", "a.c[]", "a.c[]", "d[].e", "d[].f"].sort());
    expect(pickPaths(source, ["a.b", "d[].e"])).toEqual({ a: { b: 1 }, d: [{ e: 1 }] });
  });
});
