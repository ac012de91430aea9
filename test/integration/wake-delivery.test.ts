import { describe, expect, it } from "vitest";
import { WakeDelivery } from "../../src/objects/agent/wakes/delivery";
import type { WakeJob } from "../../src/schema/agents/wake";

const job = { tenantId: "t", agentId: "a", reason: "manual", runKey: "rk", threadId: "th", authority: "runtime_instruction", input: {} } as unknown as WakeJob;
const accepted = { ok: true as const, status: "accepted" as const, runKey: "rk", runStatus: "queued" as const };
const macrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** A delivery over collaborators that answer as told; counts the watchdog arms and the drains started. */
function delivery(options: { drain?: () => Promise<void>; reported?: boolean | "never"; nothingOpen?: boolean; admitted?: boolean } = {}) {
  const seen = { arms: 0, drains: 0 };
  const subject = new WakeDelivery({
    admission: { admit: () => (options.admitted === false ? { ok: false, code: "not_found", message: "agent not found" } : accepted) },
    drain: {
      startUnwatched: () => {
        seen.drains++;
        return (options.drain ?? (() => Promise.resolve()))();
      },
    },
    forwarder: { settled: () => (options.reported === "never" ? new Promise<boolean>(() => {}) : Promise.resolve(options.reported ?? true)) },
    inbox: { isEmpty: () => options.nothingOpen ?? true },
    profile: { get: () => null },
    watchdog: { arm: () => void seen.arms++ },
    reportWaitMs: 20,
  });
  return { subject, seen };
}

describe("the wake consumer's delivery (issue 12 §7, session 14)", () => {
  it("arms no watchdog when the run drained within the stretch, its report was acknowledged and nothing is open", async () => {
    const { subject, seen } = delivery({ drain: async () => void (await Promise.resolve()) });
    expect(await subject.deliver(job)).toEqual(accepted);
    expect(seen).toEqual({ arms: 0, drains: 1 });
  });

  const leftOpen: Array<[string, Parameters<typeof delivery>[0]]> = [
    ["the run is still under way at the next macrotask (it awaits I/O)", { drain: async () => (await macrotask(), await macrotask()) }],
    ["the tenant has not acknowledged the report", { reported: false }],
    ["the report's acknowledgement does not come within the wait (a slow tenant)", { reported: "never" }],
    ["a wake is left in the inbox or a child report waits", { nothingOpen: false }],
  ];
  it.each(leftOpen)("answers with the watchdog armed when %s", async (_case, options) => {
    const { subject, seen } = delivery(options);
    expect(await subject.deliver(job)).toEqual(accepted);
    expect(seen).toEqual({ arms: 1, drains: 1 });
  });

  it("starts nothing and arms nothing for a wake the agent refused", async () => {
    const { subject, seen } = delivery({ admitted: false });
    expect(await subject.deliver(job)).toMatchObject({ ok: false, code: "not_found" });
    expect(seen).toEqual({ arms: 0, drains: 0 });
  });
});
