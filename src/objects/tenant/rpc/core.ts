import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../../env";
import type { Tenant } from "../../../schema/auth";
import { writeAudit } from "../governance/audit-log";
import type { Dispatcher } from "../alertness/dispatcher";
import type { NotificationLog } from "../alertness/notification-log";
import type { SubscriptionStore } from "../alertness/subscriptions";
import type { TenantDb } from "../types";
import { buildTenantParts, type TenantParts } from "../wiring";
import { readTenant } from "../access/tenant-record";
import { configureLogging } from "../../../log";

/**
 * The base of the TenantDO's class chain: its parts, the audit log and the one alarm every part
 * shares. The RPC surface is layered on top by area (src/objects/tenant/rpc/*), ending in TenantDO.
 */
export class TenantCore extends DurableObject<Env> {
  protected readonly parts: TenantParts;
  /** Named seams the integration tests reach inside the object (runInDurableObject): the same parts as in `parts`. */
  protected readonly db: TenantDb;
  protected readonly notifications: NotificationLog;
  protected readonly subscriptionStore: SubscriptionStore;
  protected readonly dispatcher: Dispatcher;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    configureLogging(env.VIGIL_LOG_LEVEL);
    this.parts = buildTenantParts(ctx, env, { audit: (...entry) => this.audit(...entry), armAlarmAt: (atMs) => this.armAlarmAt(atMs) });
    ({ db: this.db, notifications: this.notifications, subscriptions: this.subscriptionStore, dispatcher: this.dispatcher } = this.parts);
  }

  getTenant(): Tenant | null {
    return readTenant(this.parts.db);
  }

  /** Also an RPC: the operator audit object records tenant erasures through it. */
  audit(actor: string, action: string, target: string | null, detail: Record<string, unknown>): void {
    writeAudit(this.parts.db, actor, action, target, detail);
  }

  /** Retries subscription dispatch after a failed queue send (armed by the dispatcher). */
  override async alarm(): Promise<void> {
    await this.dispatchPending();
    // Timer brakes whose time has come are recorded as released (and re-arm the alarm for the next one).
    this.parts.brakes.sweep();
    // Outbound deliveries whose queue message could not be sent yet.
    await this.parts.outbound.sendUnqueued();
  }

  /**
   * Matches recorded, undispatched notification batches against the subscription index and queues
   * one wake per match. Every writer that records a batch calls this after its transaction commits.
   */
  protected async dispatchPending(): Promise<void> {
    await this.parts.dispatcher.dispatchPending();
  }

  /** One alarm serves dispatch retries and timer brakes: arming never pushes an earlier alarm later. */
  protected armAlarmAt(atMs: number): void {
    const armed = this.ctx.storage.getAlarm().then((current) => (current === null || current > atMs ? this.ctx.storage.setAlarm(atMs) : undefined));
    this.ctx.waitUntil(armed.catch((error: unknown) => console.error(JSON.stringify({ level: "error", msg: "arming the tenant alarm failed", error: String(error) }))));
  }
}
