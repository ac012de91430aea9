import type { TenantEvent } from "../../../schema/admin/outbound-webhooks";
import type { OutboundDeliveries } from "./outbound-webhooks";
import type { ForwardedAgentEvent, TenantEventLog } from "./tenant-event-log";
import type { TenantDb } from "../types";
import { syncTransaction } from "../../shared/statements/sync-transaction";

/**
 * The one place that decides "this happened in the tenant": an event enters the tenant log and,
 * in the same transaction, becomes the outbound deliveries it matches. After the commit it goes to
 * live stream subscribers and the deliveries to the outbound queue.
 */
export class EventFeed {
  constructor(
    private readonly db: TenantDb,
    private readonly log: TenantEventLog,
    private readonly outbound: OutboundDeliveries,
  ) {}

  /**
   * A batch forwarded by an agent; events already recorded (a re-sent batch) are skipped. Synchronous, so the caller
   * (a run report) writes its part numbers in the same stretch; it passes the answer to `afterCommit` once done.
   */
  appendAgentEvents(agentId: string, events: readonly ForwardedAgentEvent[]): TenantEvent[] {
    // Every run report comes here: without drizzle's transaction object (statements/sync-transaction.ts), one connection either way.
    return syncTransaction(this.db, () => {
      const added = this.log.appendAgentEvents(agentId, events);
      this.outbound.match(this.db, added);
      return added;
    });
  }

  /** A tenant-level event (decision resolved, brake engaged/released). */
  async recordTenantEvent(type: string, agentId: string | null, runKey: string | null, data: Record<string, unknown>): Promise<TenantEvent> {
    const event = this.db.transaction((tx) => {
      const added = this.log.appendTenantEvent(tx as unknown as TenantDb, type, agentId, runKey, data);
      this.outbound.match(tx as unknown as TenantDb, [added]);
      return added;
    });
    await this.afterCommit([event]);
    return event;
  }

  /** Live subscribers and the outbound queue get what was appended (the output gate holds both until it is durable). */
  async afterCommit(events: readonly TenantEvent[]): Promise<void> {
    if (events.length === 0) return;
    this.log.publish(events);
    await this.outbound.sendUnqueued();
  }
}
