import { describe, expect, it } from "vitest";
import { isAccepted, isTenantStreamEvent, matchesEventType, nextDeliveryStep, retryDelaySeconds, retryScheduleFrom, validateEventTypeFilter } from "../../src/core/egress/outbound-delivery";
import { config } from "../../src/config";

const schedule = { maxAttempts: 8, baseDelaySeconds: 30, maxDelaySeconds: 3600 };

describe("outbound delivery rules", () => {
  it("backs off exponentially from the base and caps the delay", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelaySeconds(n, schedule))).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600]);
    expect(retryDelaySeconds(500, schedule)).toBe(3600);
  });

  it("delivers on 2xx, retries failures until the limit, then gives up (dead)", () => {
    expect(nextDeliveryStep(1, { ok: true, status: 200 }, schedule)).toEqual({ status: "delivered" });
    expect(nextDeliveryStep(1, { ok: false, status: 500, error: "http_500" }, schedule)).toEqual({ status: "retry", delaySeconds: 30 });
    expect(nextDeliveryStep(7, { ok: false, status: null, error: "timeout" }, schedule)).toEqual({ status: "retry", delaySeconds: 1920 });
    expect(nextDeliveryStep(8, { ok: false, status: 500, error: "http_500" }, schedule)).toEqual({ status: "dead" });
  });

  it("treats redirects as failures (they are not followed)", () => {
    expect(isAccepted(204)).toBe(true);
    expect(isAccepted(301)).toBe(false);
    expect(isAccepted(404)).toBe(false);
  });

  it("matches *, exact types and prefixes, and only deliverable types", () => {
    expect(matchesEventType(["*"], "run.completed")).toBe(true);
    expect(matchesEventType(["run.*"], "run.failed")).toBe(true);
    expect(matchesEventType(["run.*"], "tool.called")).toBe(false);
    expect(matchesEventType(["decision.requested"], "decision.requested")).toBe(true);
    expect(matchesEventType(["*"], "text.delta")).toBe(false);
    expect(matchesEventType(["*"], "wake.enqueued")).toBe(false);
  });

  it("validates filters with a message naming the problem", () => {
    expect(validateEventTypeFilter("*")).toBeNull();
    expect(validateEventTypeFilter("run.*")).toBeNull();
    expect(validateEventTypeFilter("nope.*")).toMatch(/matches no/);
    expect(validateEventTypeFilter("text.delta")).toMatch(/not a deliverable/);
  });

  it("honours a schedule override only where overrides are allowed, and ignores bad values", () => {
    const defaults = config.outboundWebhooks;
    expect(retryScheduleFrom(defaults, '{"maxAttempts":3,"baseDelaySeconds":0}', false).maxAttempts).toBe(8);
    expect(retryScheduleFrom(defaults, '{"maxAttempts":3,"baseDelaySeconds":0}', true)).toMatchObject({ maxAttempts: 3, baseDelaySeconds: 0, maxDelaySeconds: 3600 });
    expect(retryScheduleFrom(defaults, '{"maxAttempts":0,"baseDelaySeconds":-1}', true)).toMatchObject({ maxAttempts: 8, baseDelaySeconds: 30 });
    expect(retryScheduleFrom(defaults, "{", true).maxAttempts).toBe(8);
  });

  it("forwards the non-live agent events to the tenant stream", () => {
    for (const type of ["run.started", "run.completed", "message.appended", "tool.called", "tool.result", "decision.requested", "lifecycle.changed", "state.changed", "report.published"]) {
      expect(isTenantStreamEvent(type)).toBe(true);
    }
    for (const type of ["text.delta", "wake.enqueued", "agent.changed"]) expect(isTenantStreamEvent(type)).toBe(false);
  });
});
