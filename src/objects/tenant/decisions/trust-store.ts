import { eq } from "drizzle-orm";
import { applyTrustEvent, decayTrust, initialTrustState, resolveTrustProfile, type TrustCalibrationProfile, type TrustChange, type TrustOutcome, type TrustState } from "../../../core/governance/trust";
import * as schema from "../../../db/tenant-schema";
import { nowIso } from "../../shared/sqlite";
import type { TenantDb } from "../types";

/**
 * Per-agent trust records (seed 002 trust engine, with the calibration profile of the tenant policy). Backend-only: the score is read
 * here to evaluate escalation predicates and written by decision outcomes; no method hands it to an
 * agent. Decay is applied lazily, whenever a record is read or updated, at the caller's tick.
 */
export class TrustStore {
  constructor(
    private readonly db: TenantDb,
    private readonly profile: () => TrustCalibrationProfile = () => resolveTrustProfile(),
  ) {}

  /** The agent's current score after any decay due by `tick` (persisted, so decay is applied once). */
  score(agentId: string, tick: number, db: TenantDb = this.db): number {
    const current = this.load(agentId, tick, db);
    const decayed = decayTrust(current, tick, this.profile());
    if (decayed !== current) this.save(agentId, decayed, db);
    return decayed.score;
  }

  /** Applies one outcome from the seed's delta table (atomically: call inside the resolving transaction). */
  apply(agentId: string, outcome: TrustOutcome, tick: number, db: TenantDb = this.db): TrustChange {
    const { state, change } = applyTrustEvent(this.load(agentId, tick, db), { outcome, tick }, this.profile());
    this.save(agentId, state, db);
    return change;
  }

  private load(agentId: string, tick: number, db: TenantDb): TrustState {
    const row = db.select().from(schema.trustRecords).where(eq(schema.trustRecords.agentId, agentId)).get();
    return row ? (row.state as unknown as TrustState) : initialTrustState(this.profile(), tick);
  }

  private save(agentId: string, state: TrustState, db: TenantDb): void {
    const value = { state: state as unknown as Record<string, unknown>, updatedAt: nowIso() };
    db.insert(schema.trustRecords).values({ agentId, ...value }).onConflictDoUpdate({ target: schema.trustRecords.agentId, set: value }).run();
  }
}
