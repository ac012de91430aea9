import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  activeBrakesFor,
  admitUnderBrakes,
  brakeActionSchema,
  brakeTrustOutcome,
  isBrakeActive,
  releaseBrake,
  releaseBrakesForDecision,
  timerReleaseAtMs,
  type Brake,
  type BrakeRequest,
} from "../../src/core/governance/brakes";

let counter = 0;
function brake(extra: Partial<Brake> = {}): Brake {
  counter++;
  return {
    id: `b${counter}`,
    scope: { type: "all" },
    behavior: "pause",
    reason: "review",
    initiatedBy: "user_1",
    createdAtMs: 1_000,
    releaseCondition: { type: "manual" },
    releasedAtMs: null,
    releasedBy: null,
    ...extra,
  };
}

const coach = { agentId: "coach", kind: "gym_coach" };
const wake: BrakeRequest = { type: "wake" };
const write: BrakeRequest = { type: "tool", toolName: "create_task", mutating: true };
const read: BrakeRequest = { type: "tool", toolName: "list_tasks_in_scope", mutating: false };
const step: BrakeRequest = { type: "run_step" };

describe("scopes", () => {
  it("matches all, agent, kind and tool scopes", () => {
    const brakes = [
      brake({ id: "all", scope: { type: "all" } }),
      brake({ id: "agent", scope: { type: "agent", agentId: "coach" } }),
      brake({ id: "other-agent", scope: { type: "agent", agentId: "planner" } }),
      brake({ id: "kind", scope: { type: "kind", kind: "gym_coach" } }),
      brake({ id: "tool", scope: { type: "tool", toolName: "create_task" } }),
    ];
    expect(activeBrakesFor(coach, brakes, 2_000).map((b) => b.id)).toEqual(["agent", "all", "kind"]);
    expect(activeBrakesFor({ ...coach, toolName: "create_task" }, brakes, 2_000).map((b) => b.id)).toEqual(["agent", "all", "kind", "tool"]);
  });

  it("orders kill before pause, then oldest first", () => {
    const brakes = [brake({ id: "p-old", createdAtMs: 1 }), brake({ id: "k", behavior: "kill", createdAtMs: 5 }), brake({ id: "p-new", createdAtMs: 3 })];
    expect(activeBrakesFor(coach, brakes, 10).map((b) => b.id)).toEqual(["k", "p-old", "p-new"]);
  });
});

describe("admitUnderBrakes", () => {
  it("admits everything when no brake applies", () => {
    const brakes = [brake({ scope: { type: "agent", agentId: "planner" } })];
    for (const request of [wake, write, read, step]) expect(admitUnderBrakes(coach, request, brakes, 2_000)).toEqual({ admit: true });
  });

  it("under pause: defers wakes, suspends run steps, denies mutating tools, lets reads through", () => {
    const brakes = [brake({ id: "p", scope: { type: "kind", kind: "gym_coach" } })];
    expect(admitUnderBrakes(coach, wake, brakes, 2_000)).toEqual({ admit: false, code: "brake_active", brakeId: "p", behavior: "pause", disposition: "defer" });
    expect(admitUnderBrakes(coach, step, brakes, 2_000)).toMatchObject({ disposition: "suspend" });
    expect(admitUnderBrakes(coach, write, brakes, 2_000)).toMatchObject({ disposition: "deny" });
    expect(admitUnderBrakes(coach, read, brakes, 2_000)).toEqual({ admit: true });
  });

  it("under kill: drops wakes, terminates runs and denies every tool", () => {
    const brakes = [brake({ id: "k", behavior: "kill", scope: { type: "agent", agentId: "coach" } })];
    expect(admitUnderBrakes(coach, wake, brakes, 2_000)).toMatchObject({ behavior: "kill", disposition: "drop" });
    expect(admitUnderBrakes(coach, step, brakes, 2_000)).toMatchObject({ disposition: "terminate" });
    expect(admitUnderBrakes(coach, read, brakes, 2_000)).toMatchObject({ disposition: "deny" });
  });

  it("a tool brake blocks only that tool, read or write, and never wakes or runs", () => {
    const brakes = [brake({ id: "t", scope: { type: "tool", toolName: "list_tasks_in_scope" } })];
    expect(admitUnderBrakes(coach, read, brakes, 2_000)).toMatchObject({ brakeId: "t", disposition: "deny" });
    expect(admitUnderBrakes(coach, write, brakes, 2_000)).toEqual({ admit: true });
    expect(admitUnderBrakes(coach, wake, brakes, 2_000)).toEqual({ admit: true });
    expect(admitUnderBrakes(coach, step, brakes, 2_000)).toEqual({ admit: true });
  });

  it("lets a kill govern when a pause and a kill both apply", () => {
    const brakes = [brake({ id: "p" }), brake({ id: "k", behavior: "kill", createdAtMs: 1_500 })];
    expect(admitUnderBrakes(coach, wake, brakes, 2_000)).toMatchObject({ brakeId: "k", disposition: "drop" });
  });

  it("never admits a mutating tool while any matching brake is active", () => {
    const arbBrake = fc.record({
      scope: fc.constantFrom<Brake["scope"]>({ type: "all" }, { type: "agent", agentId: "coach" }, { type: "kind", kind: "gym_coach" }, { type: "tool", toolName: "create_task" }),
      behavior: fc.constantFrom<Brake["behavior"]>("pause", "kill"),
      createdAtMs: fc.nat(5_000),
    });
    fc.assert(
      fc.property(fc.array(arbBrake, { maxLength: 5 }), fc.nat(10_000), (specs, now) => {
        const brakes = specs.map((spec) => brake(spec));
        const anyActive = brakes.some((b) => isBrakeActive(b, now));
        expect(admitUnderBrakes(coach, write, brakes, now).admit).toBe(!anyActive);
      }),
    );
  });
});

describe("release", () => {
  it("timer brakes release themselves after releaseAfterMs", () => {
    const b = brake({ releaseCondition: { type: "timer", releaseAfterMs: 600_000 } });
    expect(timerReleaseAtMs(b)).toBe(601_000);
    expect(isBrakeActive(b, 600_999)).toBe(true);
    expect(isBrakeActive(b, 601_000)).toBe(false);
    expect(admitUnderBrakes(coach, wake, [b], 601_000)).toEqual({ admit: true });
  });

  it("manual release takes effect from its timestamp and cannot be repeated", () => {
    const b = brake();
    const released = releaseBrake(b, 5_000, "user_2");
    expect(released).toMatchObject({ ok: true, brake: { releasedAtMs: 5_000, releasedBy: "user_2" } });
    if (!released.ok) throw new Error("unreachable");
    expect(isBrakeActive(released.brake, 4_999)).toBe(true);
    expect(isBrakeActive(released.brake, 5_000)).toBe(false);
    expect(releaseBrake(released.brake, 6_000, "user_2")).toEqual({ ok: false, code: "brake_not_active" });
  });

  it("decision brakes release when their decision resolves", () => {
    const tied = brake({ id: "tied", releaseCondition: { type: "decision", decisionId: "d1" } });
    const other = brake({ id: "other", releaseCondition: { type: "decision", decisionId: "d2" } });
    const changed = releaseBrakesForDecision([tied, other, brake()], "d1", 9_000);
    expect(changed).toEqual([{ ...tied, releasedAtMs: 9_000, releasedBy: "decision:d1" }]);
  });
});

describe("brake records", () => {
  it("validates POST /v1/brakes and defaults release to manual", () => {
    expect(brakeActionSchema.parse({ scope: { type: "tool", toolName: "publish_report" }, behavior: "pause", reason: "bad reports" })).toMatchObject({
      releaseCondition: { type: "manual" },
    });
    expect(brakeActionSchema.safeParse({ scope: { type: "workstream", workstream: "x" }, behavior: "pause", reason: "r" }).success).toBe(false);
    expect(brakeActionSchema.safeParse({ scope: { type: "all" }, behavior: "stop", reason: "r" }).success).toBe(false);
    expect(brakeActionSchema.safeParse({ scope: { type: "all" }, behavior: "kill", reason: "r", releaseCondition: { type: "timer", releaseAfterMs: 0 } }).success).toBe(false);
  });

  it("costs braked agents the seed's -3 trust outcome, but not for a tool brake", () => {
    expect(brakeTrustOutcome(brake({ scope: { type: "agent", agentId: "coach" } }))).toBe("human_overrides_via_brake");
    expect(brakeTrustOutcome(brake({ scope: { type: "tool", toolName: "x" } }))).toBeNull();
  });
});
