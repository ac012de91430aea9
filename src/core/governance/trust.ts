import { z } from "zod";

/**
 * The trust engine (seed 002 "Trust score update rules" / "Trust score calibration").
 * Trust is backend-only: nothing here may be rendered into an agent's context.
 * Time is measured in ticks, like the seed; the shell decides what a tick is.
 */

/** Seed 002 `TrustOutcome`: one key per row of the delta table. */
export const TRUST_OUTCOMES = [
  "human_approves_recommended_option",
  "human_approves_tool_call",
  "human_approves_always",
  "human_picks_non_recommended",
  "human_modifies_tool_args",
  "human_rejects_tool_call",
  "human_overrides_via_brake",
  "artifact_approved",
  "artifact_rejected",
  "coherence_issue_confirmed",
  "coherence_issue_missed",
  "decision_auto_resolved",
  "task_completed_success",
  "task_completed_partial",
  "task_abandoned_or_max_turns",
] as const;
export type TrustOutcome = (typeof TRUST_OUTCOMES)[number];

/** Seed 002 delta table, base deltas before multipliers and diminishing returns. */
export const BASE_TRUST_DELTAS: Readonly<Record<TrustOutcome, number>> = {
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
};

/** Seed 002 `TrustCalibrationConfig`. */
export interface TrustCalibrationConfig {
  initialScore: number;
  floorScore: number;
  ceilingScore: number;
  decayTargetScore: number;
  /** Points per inactive tick; 0.01 = 1 point per 100 ticks (`trustDecayTicks`). */
  decayRatePerTick: number;
  diminishingReturnThresholdHigh: number;
  diminishingReturnThresholdLow: number;
  deltaTable: Partial<Record<TrustOutcome, number>>;
  /** When true, the actual score is frozen and only `proposedScore` moves. */
  calibrationMode: boolean;
}

export type TrustProfileName = "conservative" | "balanced" | "permissive";

/** Seed 002 `TrustCalibrationProfile`. */
export interface TrustCalibrationProfile {
  name: TrustProfileName;
  config: TrustCalibrationConfig;
  negativeDeltaMultiplier: number;
  positiveDeltaMultiplier: number;
}

/** Seed 002 `TrustCalibrationConfig` defaults. */
export const DEFAULT_TRUST_CONFIG: TrustCalibrationConfig = {
  initialScore: 50,
  floorScore: 10,
  ceilingScore: 100,
  decayTargetScore: 50,
  decayRatePerTick: 0.01,
  diminishingReturnThresholdHigh: 90,
  diminishingReturnThresholdLow: 20,
  deltaTable: {},
  calibrationMode: false,
};

/** Seed 002 profile table: initial score, decay rate and multipliers per profile. */
export const TRUST_CALIBRATION_PROFILES: Readonly<Record<TrustProfileName, TrustCalibrationProfile>> = {
  conservative: {
    name: "conservative",
    config: { ...DEFAULT_TRUST_CONFIG, initialScore: 30, decayRatePerTick: 0.02 },
    negativeDeltaMultiplier: 1.5,
    positiveDeltaMultiplier: 0.75,
  },
  balanced: {
    name: "balanced",
    config: { ...DEFAULT_TRUST_CONFIG },
    negativeDeltaMultiplier: 1,
    positiveDeltaMultiplier: 1,
  },
  permissive: {
    name: "permissive",
    config: { ...DEFAULT_TRUST_CONFIG, initialScore: 70, decayRatePerTick: 0.005 },
    negativeDeltaMultiplier: 0.5,
    positiveDeltaMultiplier: 1.25,
  },
};

/** Per-project overrides, validated where they enter (policy API). */
export const trustCalibrationConfigSchema = z
  .object({
    initialScore: z.number(),
    floorScore: z.number(),
    ceilingScore: z.number(),
    decayTargetScore: z.number(),
    decayRatePerTick: z.number().min(0).max(1),
    diminishingReturnThresholdHigh: z.number(),
    diminishingReturnThresholdLow: z.number(),
    deltaTable: z.partialRecord(z.enum(TRUST_OUTCOMES), z.number().int()),
    calibrationMode: z.boolean(),
  })
  .partial()
  .strict();
export type TrustCalibrationOverrides = z.infer<typeof trustCalibrationConfigSchema>;

/** A profile preset with per-project overrides applied; explicit `deltaTable` entries win over multipliers. */
export function resolveTrustProfile(
  name: TrustProfileName = "balanced",
  overrides: TrustCalibrationOverrides = {},
): TrustCalibrationProfile {
  const preset = TRUST_CALIBRATION_PROFILES[name];
  const config = { ...preset.config, ...overrides, deltaTable: { ...preset.config.deltaTable, ...overrides.deltaTable } };
  if (config.floorScore > config.ceilingScore) throw new RangeError("trust.floorScore must be <= trust.ceilingScore");
  return { ...preset, config };
}

/** Per-agent runtime state (the seed's `TrustProfile` score part). */
export interface TrustState {
  /** The score escalation reads. Frozen while `calibrationMode` is on. */
  score: number;
  /** The hypothetical score calibration mode computes; equals `score` in live mode. */
  proposedScore: number;
  /** Last tick with a trust event for this agent. */
  lastActivityTick: number;
  /** Start of the current decay interval: last activity, or the last tick decay was applied at. */
  decayAnchorTick: number;
}

export interface TrustEvent {
  outcome: TrustOutcome;
  tick: number;
}

/** What one event did, for audit and for `TrustUpdateMessage`. */
export interface TrustChange {
  outcome: TrustOutcome;
  baseDelta: number;
  /** After multipliers and diminishing returns, before clamping. */
  effectiveDelta: number;
  previousScore: number;
  /** The score the delta produced (the proposed score in calibration mode). */
  nextScore: number;
  /** False in calibration mode: logged, not applied. */
  applied: boolean;
}

const BALANCED = TRUST_CALIBRATION_PROFILES.balanced;

/** A new agent's state (seed 002: new agents start at 50, or the profile's initial score). */
export function initialTrustState(profile: TrustCalibrationProfile = BALANCED, tick = 0): TrustState {
  const score = clamp(profile.config.initialScore, profile.config);
  return { score, proposedScore: score, lastActivityTick: tick, decayAnchorTick: tick };
}

function clamp(score: number, config: TrustCalibrationConfig): number {
  return Math.min(config.ceilingScore, Math.max(config.floorScore, score));
}

/** Rounds toward zero without producing `-0`. */
function truncate(value: number): number {
  const t = Math.trunc(value);
  return t === 0 ? 0 : t;
}

/** Base delta → profile multiplier (unless the delta table overrides the outcome) → rounded toward zero. */
export function profileDelta(outcome: TrustOutcome, profile: TrustCalibrationProfile = BALANCED): number {
  const override = profile.config.deltaTable[outcome];
  if (override !== undefined) return override;
  const base = BASE_TRUST_DELTAS[outcome];
  const multiplier = base < 0 ? profile.negativeDeltaMultiplier : profile.positiveDeltaMultiplier;
  return truncate(base * multiplier);
}

/** Seed 002 diminishing returns: strictly above 90 or below 20 every delta is halved, rounded toward zero. */
export function diminishedDelta(delta: number, score: number, config: TrustCalibrationConfig = DEFAULT_TRUST_CONFIG): number {
  const extreme = score > config.diminishingReturnThresholdHigh || score < config.diminishingReturnThresholdLow;
  return extreme ? truncate(delta / 2) : delta;
}

/** Ticks of inactivity per decay point (seed 002: `trustDecayTicks`, default 100), or null if decay is off. */
export function decayIntervalTicks(config: TrustCalibrationConfig): number | null {
  return config.decayRatePerTick > 0 ? Math.round(1 / config.decayRatePerTick) : null;
}

function decayScore(score: number, steps: number, config: TrustCalibrationConfig): number {
  const target = config.decayTargetScore;
  if (score > target) return Math.max(target, score - steps);
  return Math.min(target, score + steps);
}

/**
 * Seed 002 decay: 1 point toward 50 per full `trustDecayTicks` of inactivity; never crosses the target.
 * Idempotent for a given tick, so it can run on every tick or only when the score is read.
 */
export function decayTrust(state: TrustState, tick: number, profile: TrustCalibrationProfile = BALANCED): TrustState {
  const interval = decayIntervalTicks(profile.config);
  if (interval === null || tick <= state.decayAnchorTick) return state;
  const steps = Math.floor((tick - state.decayAnchorTick) / interval);
  if (steps === 0) return state;
  const decayAnchorTick = state.decayAnchorTick + steps * interval;
  if (profile.config.calibrationMode) {
    return { ...state, proposedScore: decayScore(state.proposedScore, steps, profile.config), decayAnchorTick };
  }
  const score = decayScore(state.score, steps, profile.config);
  return { ...state, score, proposedScore: score, decayAnchorTick };
}

/**
 * Applies one outcome (seed 002: atomically per event, against the latest score):
 * pending decay up to `event.tick`, then the profile delta, diminishing returns, clamp [10, 100].
 * In calibration mode only `proposedScore` moves; `change.applied` is false.
 */
export function applyTrustEvent(
  state: TrustState,
  event: TrustEvent,
  profile: TrustCalibrationProfile = BALANCED,
): { state: TrustState; change: TrustChange } {
  const decayed = decayTrust(state, event.tick, profile);
  const live = !profile.config.calibrationMode;
  const previousScore = live ? decayed.score : decayed.proposedScore;
  const effectiveDelta = diminishedDelta(profileDelta(event.outcome, profile), previousScore, profile.config);
  const nextScore = clamp(previousScore + effectiveDelta, profile.config);
  const activityTick = Math.max(event.tick, decayed.lastActivityTick);
  const next: TrustState = {
    score: live ? nextScore : decayed.score,
    proposedScore: nextScore,
    lastActivityTick: activityTick,
    decayAnchorTick: Math.max(activityTick, decayed.decayAnchorTick),
  };
  return {
    state: next,
    change: {
      outcome: event.outcome,
      baseDelta: BASE_TRUST_DELTAS[event.outcome],
      effectiveDelta,
      previousScore,
      nextScore,
      applied: live,
    },
  };
}

/** Applies a sequence of events in order; the shell's replay and the calibration simulation use this. */
export function replayTrust(
  state: TrustState,
  events: Iterable<TrustEvent>,
  profile: TrustCalibrationProfile = BALANCED,
): { state: TrustState; changes: TrustChange[] } {
  let current = state;
  const changes: TrustChange[] = [];
  for (const event of events) {
    const result = applyTrustEvent(current, event, profile);
    current = result.state;
    changes.push(result.change);
  }
  return { state: current, changes };
}
