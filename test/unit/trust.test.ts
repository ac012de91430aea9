import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prng } from "../support/prng";
import {
  applyTrustEvent,
  BASE_TRUST_DELTAS,
  decayTrust,
  diminishedDelta,
  initialTrustState,
  profileDelta,
  replayTrust,
  resolveTrustProfile,
  TRUST_CALIBRATION_PROFILES,
  TRUST_OUTCOMES,
  trustCalibrationConfigSchema,
  type TrustEvent,
  type TrustOutcome,
  type TrustState,
} from "../../src/core/governance/trust";

const at = (score: number, tick = 0): TrustState => ({ score, proposedScore: score, lastActivityTick: tick, decayAnchorTick: tick });
const apply = (score: number, outcome: TrustOutcome) => applyTrustEvent(at(score), { outcome, tick: 0 }).state.score;


describe("delta table (seed 002 'Trust score update rules')", () => {
  it("has every outcome with the seed's base delta", () => {
    expect(BASE_TRUST_DELTAS).toEqual({
      human_approves_recommended_option: 2,
      human_approves_tool_call: 1,
      human_approves_always: 3,
      human_picks_non_recommended: -1,
      human_modifies_tool_args: -1,
      human_rejects_tool_call: -2,
      human_overrides_via_brake: -3,
      artifact_approved: 1,
      artifact_rejected: -2,
      coherence_issue_confirmed: 1,
      coherence_issue_missed: -2,
      decision_auto_resolved: 0,
      task_completed_success: 1,
      task_completed_partial: 0,
      task_abandoned_or_max_turns: -1,
    });
    expect(Object.keys(BASE_TRUST_DELTAS).sort()).toEqual([...TRUST_OUTCOMES].sort());
  });

  it("starts new agents at 50", () => {
    expect(initialTrustState()).toEqual(at(50));
  });

  it("applies approve = +1/+2, reject = -2 in the middle band (Phase 0 acceptance)", () => {
    expect(apply(50, "human_approves_tool_call")).toBe(51);
    expect(apply(50, "human_approves_recommended_option")).toBe(52);
    expect(apply(50, "human_approves_always")).toBe(53);
    expect(apply(50, "human_rejects_tool_call")).toBe(48);
    expect(apply(50, "human_overrides_via_brake")).toBe(47);
    expect(apply(50, "decision_auto_resolved")).toBe(50);
  });
});

describe("diminishing returns and clamping", () => {
  it("halves alwaysApprove's +3 to +1 above 90 (the seed's anti-gaming example)", () => {
    expect(apply(91, "human_approves_always")).toBe(92);
  });

  it("halves strictly above 90 and strictly below 20, rounding toward zero", () => {
    expect(apply(90, "human_approves_always")).toBe(93);
    expect(apply(20, "human_overrides_via_brake")).toBe(17);
    expect(apply(19, "human_overrides_via_brake")).toBe(18);
    expect(apply(19, "human_rejects_tool_call")).toBe(18);
    expect(apply(95, "human_approves_tool_call")).toBe(95);
    expect(apply(95, "human_picks_non_recommended")).toBe(95);
    expect(diminishedDelta(-3, 15)).toBe(-1);
    expect(Object.is(diminishedDelta(-1, 15), 0)).toBe(true);
  });

  it("clamps to [10, 100]", () => {
    expect(apply(99, "human_approves_always")).toBe(100);
    expect(apply(10, "human_overrides_via_brake")).toBe(10);
    expect(apply(21, "human_overrides_via_brake")).toBe(18);
  });

  it("keeps trust within [10, 100] for any event sequence and profile", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("conservative", "balanced", "permissive" as const),
        fc.array(fc.record({ outcome: fc.constantFrom(...TRUST_OUTCOMES), gap: fc.nat(500) }), { maxLength: 300 }),
        (name, steps) => {
          const profile = TRUST_CALIBRATION_PROFILES[name];
          let state = initialTrustState(profile);
          let tick = 0;
          for (const step of steps) {
            tick += step.gap;
            state = applyTrustEvent(state, { outcome: step.outcome, tick }, profile).state;
            expect(state.score).toBeGreaterThanOrEqual(10);
            expect(state.score).toBeLessThanOrEqual(100);
            expect(Number.isInteger(state.score)).toBe(true);
          }
        },
      ),
    );
  });
});

describe("decay toward 50 (1 point per 100 inactive ticks)", () => {
  it("moves a score above 50 down and below 50 up, one point per full interval", () => {
    expect(decayTrust(at(60), 99).score).toBe(60);
    expect(decayTrust(at(60), 100).score).toBe(59);
    expect(decayTrust(at(40), 350).score).toBe(43);
  });

  it("lets an idle low-trust agent (25) drift back to 50 but never past it", () => {
    expect(decayTrust(at(25), 2_500).score).toBe(50);
    expect(decayTrust(at(25), 1_000_000).score).toBe(50);
    expect(decayTrust(at(80), 1_000_000).score).toBe(50);
  });

  it("is the same whether applied every tick or once", () => {
    let stepwise = at(70);
    for (let tick = 1; tick <= 1_234; tick++) stepwise = decayTrust(stepwise, tick);
    expect(stepwise).toEqual(decayTrust(at(70), 1_234));
  });

  it("restarts the inactivity clock on every event", () => {
    const afterEvent = applyTrustEvent(at(60), { outcome: "task_completed_partial", tick: 90 }).state;
    expect(decayTrust(afterEvent, 150).score).toBe(60);
    expect(decayTrust(afterEvent, 190).score).toBe(59);
  });

  it("applies pending decay before the event's delta", () => {
    const { change } = applyTrustEvent(at(60), { outcome: "human_approves_tool_call", tick: 200 });
    expect(change).toMatchObject({ previousScore: 58, nextScore: 59 });
  });
});

describe("calibration profiles", () => {
  it("match the seed's profile table", () => {
    const { conservative, balanced, permissive } = TRUST_CALIBRATION_PROFILES;
    expect([conservative.config.initialScore, conservative.config.decayRatePerTick, conservative.negativeDeltaMultiplier, conservative.positiveDeltaMultiplier]).toEqual([30, 0.02, 1.5, 0.75]);
    expect([balanced.config.initialScore, balanced.config.decayRatePerTick, balanced.negativeDeltaMultiplier, balanced.positiveDeltaMultiplier]).toEqual([50, 0.01, 1, 1]);
    expect([permissive.config.initialScore, permissive.config.decayRatePerTick, permissive.negativeDeltaMultiplier, permissive.positiveDeltaMultiplier]).toEqual([70, 0.005, 0.5, 1.25]);
  });

  it("scales deltas by the profile multiplier, rounded toward zero", () => {
    const { conservative, permissive } = TRUST_CALIBRATION_PROFILES;
    expect(profileDelta("human_rejects_tool_call", conservative)).toBe(-3);
    expect(profileDelta("human_overrides_via_brake", conservative)).toBe(-4);
    expect(profileDelta("human_approves_tool_call", conservative)).toBe(0);
    expect(profileDelta("human_approves_always", conservative)).toBe(2);
    expect(profileDelta("human_approves_always", permissive)).toBe(3);
    expect(profileDelta("human_approves_recommended_option", permissive)).toBe(2);
    expect(profileDelta("human_picks_non_recommended", permissive)).toBe(0);
    expect(profileDelta("human_overrides_via_brake", permissive)).toBe(-1);
  });

  it("decays faster in conservative (every 50 ticks) and slower in permissive (every 200)", () => {
    expect(decayTrust(at(60), 50, TRUST_CALIBRATION_PROFILES.conservative).score).toBe(59);
    expect(decayTrust(at(60), 199, TRUST_CALIBRATION_PROFILES.permissive).score).toBe(60);
    expect(decayTrust(at(60), 200, TRUST_CALIBRATION_PROFILES.permissive).score).toBe(59);
  });

  it("lets explicit deltaTable overrides take precedence over multipliers", () => {
    const profile = resolveTrustProfile("conservative", { deltaTable: { human_approves_always: 1, human_rejects_tool_call: -2 } });
    expect(profileDelta("human_approves_always", profile)).toBe(1);
    expect(profileDelta("human_rejects_tool_call", profile)).toBe(-2);
    expect(profileDelta("artifact_rejected", profile)).toBe(-3);
    expect(initialTrustState(profile).score).toBe(30);
  });

  it("validates per-project overrides", () => {
    expect(trustCalibrationConfigSchema.safeParse({ deltaTable: { human_approves_always: 1 } }).success).toBe(true);
    expect(trustCalibrationConfigSchema.safeParse({ deltaTable: { made_up: 1 } }).success).toBe(false);
    expect(trustCalibrationConfigSchema.safeParse({ decayRatePerTick: -1 }).success).toBe(false);
    expect(() => resolveTrustProfile("balanced", { floorScore: 80, ceilingScore: 70 })).toThrow(/floorScore/);
  });
});

describe("calibrationMode", () => {
  it("logs proposed deltas without changing the actual score", () => {
    const profile = resolveTrustProfile("balanced", { calibrationMode: true });
    const events: TrustEvent[] = [
      { outcome: "human_approves_always", tick: 1 },
      { outcome: "human_approves_recommended_option", tick: 2 },
      { outcome: "human_rejects_tool_call", tick: 3 },
    ];
    const { state, changes } = replayTrust(initialTrustState(profile), events, profile);
    expect(state.score).toBe(50);
    expect(state.proposedScore).toBe(53);
    expect(changes.map((c) => [c.effectiveDelta, c.nextScore, c.applied])).toEqual([
      [3, 53, false],
      [2, 55, false],
      [-2, 53, false],
    ]);
  });

  it("decays only the proposed score while calibrating", () => {
    const profile = resolveTrustProfile("balanced", { calibrationMode: true });
    const decayed = decayTrust({ score: 70, proposedScore: 80, lastActivityTick: 0, decayAnchorTick: 0 }, 300, profile);
    expect([decayed.score, decayed.proposedScore]).toEqual([70, 77]);
  });
});

/** Seed 002 "Calibration strategy": scripted agents of known quality through the engine. */
describe("calibration simulation (seeded)", () => {
  const GOOD: TrustOutcome[] = ["human_approves_tool_call", "human_approves_recommended_option", "task_completed_success", "artifact_approved"];
  const MILD_BAD: TrustOutcome[] = ["human_modifies_tool_args", "human_picks_non_recommended"];
  const BAD: TrustOutcome[] = ["human_rejects_tool_call", "artifact_rejected", "task_abandoned_or_max_turns"];
  const pick = <T,>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  /** One event every 10 ticks; `quality` is the chance of a good outcome, `harsh` the chance a bad one is severe. */
  function simulate(state: TrustState, startTick: number, events: number, quality: number, harsh: number, random: () => number) {
    const trajectory: number[] = [];
    let tick = startTick;
    for (let i = 0; i < events; i++) {
      tick += 10;
      const outcome = random() < quality ? pick(random, GOOD) : pick(random, random() < harsh ? BAD : MILD_BAD);
      state = applyTrustEvent(state, { outcome, tick }).state;
      trajectory.push(state.score);
    }
    return { state, trajectory, tick };
  }

  const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

  it("convergence: a good agent (mostly approvals, clean completions) passes 80 within 60 events and stays high", () => {
    for (const seed of SEEDS) {
      const { trajectory } = simulate(initialTrustState(), 0, 200, 0.9, 0.2, prng(seed));
      const firstAbove80 = trajectory.findIndex((score) => score > 80);
      expect(firstAbove80).toBeGreaterThanOrEqual(0);
      expect(firstAbove80).toBeLessThan(60);
      expect(Math.min(...trajectory.slice(firstAbove80))).toBeGreaterThan(70);
    }
  });

  it("recovery: struggling agents stay off the floor and climb back once they perform well", () => {
    const runs = SEEDS.map((seed) => {
      const random = prng(seed);
      let state = initialTrustState();
      for (let i = 1; i <= 6; i++) state = applyTrustEvent(state, { outcome: "human_rejects_tool_call", tick: i * 10 }).state;
      expect(state.score).toBe(38);
      const struggling = simulate(state, 60, 100, 0.6, 0.5, random);
      const recovered = simulate(struggling.state, struggling.tick, 100, 0.9, 0.2, random);
      return { low: Math.min(...struggling.trajectory), final: recovered.state.score };
    });
    // Below 20 every delta is halved, so a mixed record bottoms out above the floor rather than on it.
    expect(runs.every((run) => run.low > 10)).toBe(true);
    expect(runs.filter((run) => run.low > 20).length).toBeGreaterThanOrEqual(16);
    expect(runs.every((run) => run.final > 80)).toBe(true);
  });

  it("separation: good, mediocre and bad agents end at meaningfully different scores", () => {
    const mean = (quality: number) =>
      SEEDS.map((seed) => simulate(initialTrustState(), 0, 300, quality, 0.7, prng(seed)).state.score).reduce((a, b) => a + b, 0) / SEEDS.length;
    const [good, mediocre, bad] = [mean(0.9), mean(0.6), mean(0.2)];
    expect(good).toBeGreaterThan(90);
    expect(bad).toBeLessThan(20);
    expect(good - mediocre).toBeGreaterThan(5);
    expect(mediocre - bad).toBeGreaterThan(40);
  });

  it("responsiveness: a trusted agent that starts producing bad artifacts drops below 70 within 10 events", () => {
    const trusted = simulate(initialTrustState(), 0, 200, 0.95, 0.2, prng(5)).state;
    expect(trusted.score).toBeGreaterThan(80);
    let state = trusted;
    let eventsToDrop = 0;
    while (state.score >= 70 && eventsToDrop < 50) {
      eventsToDrop++;
      state = applyTrustEvent(state, { outcome: "artifact_rejected", tick: 5_000 + eventsToDrop }).state;
    }
    expect(eventsToDrop).toBeLessThanOrEqual(10);
  });
});
