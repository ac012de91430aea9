import { eq } from "drizzle-orm";
import { config } from "../../../config";
import { counters } from "../../../db/common-schema";
import type { AgentSnapshot, RunGovernance } from "../../../schema/contracts";
import type { ToolListing } from "../../../schema/admin/tools";
import type { TenantDb } from "../types";
import { counterStatements } from "../../shared/counters";

/** Which agents a change concerns: one agent, every agent of a kind, or all of them. */
export type SnapshotAudience = { agentId: string } | { kind: string } | "all";

export interface AgentSnapshotsDeps {
  db: TenantDb;
  governanceFor(agent: { agentId: string; kind: string }): RunGovernance;
  httpTools(): ToolListing[];
  exportsTraces(): boolean;
  liveAgents(): Array<{ agentId: string; kind: string }>;
  /** `AgentDO.applyTenantSnapshot` (one RPC per agent). */
  deliver(agentId: string, snapshot: AgentSnapshot): Promise<unknown>;
}

const VERSION_KEY = "agent-snapshot:version";

/**
 * The tenant's side of the snapshot: it answers an agent's first read and pushes a new version to the
 * affected agents when the policy changes, a brake is engaged or released, or an HTTP tool is
 * registered or deleted. The push completes before the change is answered, so a brake stops an
 * agent's next wake at once; a push that fails is healed by the version the per-run report returns
 * and, at the latest, by the snapshot's maximum age (config.snapshot.maxAgeSeconds).
 */
export class AgentSnapshots {
  /**
   * The stored version, read once (every run report answers with it). Exact because `publish`
   * is the row's only writer and sets it with its write, and the tenant's erasure (every row gone) drops it (`forget`).
   */
  private known: number | undefined;

  constructor(private readonly deps: AgentSnapshotsDeps) {}

  version(): number {
    if (this.known === undefined) {
      const version = counterStatements(this.deps.db).read.get({ key: VERSION_KEY })?.state.version;
      this.known = typeof version === "number" ? version : 1;
    }
    return this.known;
  }

  /** Every row is gone (the tenant's erasure): the next read asks the database again. */
  forget(): void {
    this.known = undefined;
  }

  for(agent: { agentId: string; kind: string }): AgentSnapshot {
    return { version: this.version(), governance: this.deps.governanceFor(agent), httpTools: this.deps.httpTools(), telemetry: this.deps.exportsTraces() };
  }

  /** A new version, pushed to the agents it concerns; resolves once every push was answered (or failed). */
  async publish(audience: SnapshotAudience): Promise<{ pushed: number; failed: number }> {
    const state = { version: this.version() + 1 };
    this.deps.db.insert(counters).values({ key: VERSION_KEY, state }).onConflictDoUpdate({ target: counters.key, set: { state } }).run();
    this.known = state.version;
    const agents = this.deps.liveAgents().filter((agent) => audience === "all" || ("agentId" in audience ? agent.agentId === audience.agentId : agent.kind === audience.kind));
    let pushed = 0;
    let failed = 0;
    for (let start = 0; start < agents.length; start += config.snapshot.pushConcurrency) {
      const chunk = agents.slice(start, start + config.snapshot.pushConcurrency);
      const results = await Promise.allSettled(chunk.map((agent) => this.deps.deliver(agent.agentId, this.for(agent))));
      for (const [index, result] of results.entries()) {
        if (result.status === "fulfilled") pushed++;
        else {
          failed++;
          console.error(JSON.stringify({ level: "error", msg: "tenant snapshot push failed", agentId: chunk[index]!.agentId, version: state.version, error: String(result.reason) }));
        }
      }
    }
    return { pushed, failed };
  }
}
