import { Agent as AgentBase } from "agents";
import type { Env } from "../../env";
import { failure, type Failure } from "../../http/error-codes";
import type { AgentScheduler } from "./agent-schedule";
import type { Compaction } from "./compaction";
import type { MemoryContext } from "./context";
import type { AgentErasure } from "./erasure";
import type { EventLog } from "./event-log";
import type { History } from "./history";
import { buildAgentParts, type AgentParts } from "./parts";
import type { AgentProfile } from "./profile";
import type { Reports } from "./reports";
import type { WakeInbox } from "./wake-inbox";
import { configureLogging } from "../../log";

/**
 * The base of AgentDO's class chain (core → memory → runs → delegation → AgentDO, one RPC area per
 * layer): builds the parts every layer delegates to. The Agents SDK schedule callbacks the parts arm
 * are declared here, so a layer that drops one fails to compile instead of failing at alarm time.
 */
export abstract class AgentCore extends AgentBase<Env> {
  protected readonly parts: AgentParts;
  // Parts integration tests inspect in place (runInDurableObject), under the names they had as fields of AgentDO.
  private readonly log: EventLog;
  private readonly profile: AgentProfile;
  private readonly inbox: WakeInbox;
  private readonly history: History;
  private readonly reports: Reports;
  private readonly compaction: Compaction;
  private readonly memoryContext: MemoryContext;
  private readonly erasure: AgentErasure;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    configureLogging(env.VIGIL_LOG_LEVEL);
    const scheduler: AgentScheduler = {
      schedule: (when, callback, options) => this.schedule(when, callback, undefined, options),
      // listSchedules waits for the SDK's scheduler to start (and migrate old rows); the sync getSchedules is deprecated.
      listSchedules: () => this.listSchedules(),
      cancelSchedule: (id) => this.cancelSchedule(id),
    };
    this.parts = buildAgentParts(ctx, env, scheduler);
    ({ events: this.log, profile: this.profile, inbox: this.inbox, history: this.history } = this.parts);
    ({ reports: this.reports, compaction: this.compaction, memoryContext: this.memoryContext, erasure: this.erasure } = this.parts);
  }

  // The Agents SDK schedule callbacks (`AgentCallback`), implemented by the layers above.
  abstract watchdog(): Promise<void>;
  abstract onTimerAlarm(): Promise<void>;
  abstract onCompactionAlarm(): Promise<void>;
  abstract onErasureDue(): Promise<void>;
  abstract expireLineage(): Promise<void>;
  abstract onSessionExpiry(): Promise<void>;

  /** not_found while this object holds no agent (never created, or erased). */
  protected missingAgent(): Failure | null {
    return this.parts.profile.get() ? null : failure("not_found", "agent not found");
  }

  /** Test seams answer not_found unless VIGIL_FAULTS=enabled. */
  protected seamDisabled(): Failure | null {
    return this.env.VIGIL_FAULTS === "enabled" ? null : failure("not_found", "no such method");
  }
}
