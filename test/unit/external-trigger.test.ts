import { createHmac, hkdfSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  deriveTriggerToken,
  formatTriggerId,
  hashTriggerToken,
  tenantIdOfTriggerId,
  triggerDeliveryId,
  triggerTokenHashMatches,
  triggerTokenKey,
  triggerWake,
} from "../../src/core/wakes/external-trigger";
import { H } from "../../src/core/ids/hash";

const MASTER = "dGVzdC1tYXN0ZXIta2V5LTMyLWJ5dGVzLWxvbmctISE=";
const TENANT = "t0123456789abcdef";

describe("external trigger ids", () => {
  it("embed the tenant id, which ingress reads back", () => {
    const id = formatTriggerId(TENANT, "abcdefghjkmnpqrstvwx");
    expect(id).toBe(`trg_${TENANT}_abcdefghjkmnpqrstvwx`);
    expect(tenantIdOfTriggerId(id)).toBe(TENANT);
    for (const bad of ["", "trg_", `trg_${TENANT}`, `trg_${TENANT}_short`, `trg_T0123456789ABCDEF_abcdefghjkmnpqrstvwx`, `key_${TENANT}_abcdefghjkmnpqrstvwx`]) {
      expect(tenantIdOfTriggerId(bad)).toBeNull();
    }
    expect(() => formatTriggerId("nope", "abcdefghjkmnpqrstvwx")).toThrow(TypeError);
  });
});

describe("trigger tokens", () => {
  it("are HMAC-SHA-256(HKDF(master, purpose), 'v1|' + triggerId), base64url, deterministic per id", async () => {
    const key = await triggerTokenKey(MASTER);
    const id = formatTriggerId(TENANT, "abcdefghjkmnpqrstvwx");
    const token = await deriveTriggerToken(key, id);
    const hk = Buffer.from(hkdfSync("sha256", Buffer.from(MASTER), Buffer.from("vigil/secret-box/hkdf-salt/v1"), Buffer.from("vigil/agent-trigger-token"), 32));
    expect(token).toBe(createHmac("sha256", hk).update(`v1|${id}`).digest("base64url"));
    expect(token).toHaveLength(43);
    expect(await deriveTriggerToken(key, id)).toBe(token);
    expect(await deriveTriggerToken(key, formatTriggerId(TENANT, "abcdefghjkmnpqrstvwy"))).not.toBe(token);
    expect(await deriveTriggerToken(await triggerTokenKey("other-master-key-that-is-long-enough"), id)).not.toBe(token);
  });

  it("verify by hash in constant time", () => {
    const stored = hashTriggerToken("secret-token");
    expect(triggerTokenHashMatches(hashTriggerToken("secret-token"), stored)).toBe(true);
    expect(triggerTokenHashMatches(hashTriggerToken("secret-tokem"), stored)).toBe(false);
    expect(triggerTokenHashMatches("", stored)).toBe(false);
  });
});

describe("trigger deliveries", () => {
  const body = new TextEncoder().encode('{"status":"done"}');

  it("take their id from Idempotency-Key, then X-Vigil-Delivery, then the body hash", () => {
    expect(triggerDeliveryId(new Headers({ "Idempotency-Key": "a", "X-Vigil-Delivery": "b" }), body)).toEqual({ ok: true, deliveryId: "a", derived: false });
    expect(triggerDeliveryId(new Headers({ "X-Vigil-Delivery": "b" }), body)).toEqual({ ok: true, deliveryId: "b", derived: false });
    const derived = triggerDeliveryId(new Headers(), body);
    expect(derived).toMatchObject({ ok: true, derived: true, deliveryId: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(triggerDeliveryId(new Headers(), body)).toEqual(derived);
    expect(triggerDeliveryId(new Headers({ "X-Vigil-Delivery": "x".repeat(201) }), body)).toMatchObject({ ok: false });
  });

  it("become a webhook wake keyed H(agentId, triggerId, deliveryId), framed as external evidence", () => {
    const wake = triggerWake({ tenantId: TENANT, agentId: "ag_1", triggerId: "trg_x", deliveryId: "d1", logicalChangeKey: "lck", data: { text: "/tool sleep {}" } });
    expect(wake).toMatchObject({
      reason: "webhook",
      runKey: H("ag_1", "trg_x", "d1"),
      threadId: `ag_1:run:${H("ag_1", "trg_x", "d1")}`,
      authority: "external_evidence",
      input: { observation: { summary: "webhook delivery d1 on trigger trg_x", data: { text: "/tool sleep {}" } } },
    });
  });
});
