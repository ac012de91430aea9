import { eq } from "drizzle-orm";
import * as schema from "../../../db/agent-schema";
import type { AgentSnapshot } from "../../../schema/contracts";
import type { AgentDb } from "../types";
import { counterStatements } from "../../shared/counters";

const KEY = "tenant-snapshot";

interface Held {
  snapshot: AgentSnapshot;
  /** When this agent last had it confirmed by the tenant (a fetch or a push). */
  confirmedAtMs: number;
}

export interface TenantSnapshotDeps {
  db: AgentDb;
  /** `TenantDO.agentSnapshot` (one RPC): only when none is held, it is too old, or a newer version is known to exist. */
  load(agent: { agentId: string; kind: string }): Promise<AgentSnapshot>;
  maxAgeMs: number;
  now?: () => number;
}

/**
 * The tenant snapshot this agent keeps, in its own SQLite so it survives eviction. The
 * run loop reads it at admission, at step boundaries and before tool calls without a TenantDO call;
 * the tenant pushes every new version (`applyTenantSnapshot`). A version older than the one held is
 * ignored, so a slow fetch never undoes a push. A snapshot older than `maxAgeMs`, or below a version
 * the tenant reported after a run, is fetched again: a lost push costs one call, never a stale brake
 * for longer than that.
 */
export class TenantSnapshotCache {
  /** undefined: not read from SQLite yet since activation. */
  private held: Held | null | undefined;
  private newerThanHeld = 0;

  constructor(private readonly deps: TenantSnapshotDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private read(): Held | null {
    if (this.held === undefined) {
      // The counters' shared read (one statement per isolate, and on a cold wake one prepare fewer: the forwarder's).
      const row = counterStatements(this.deps.db).read.get({ key: KEY });
      this.held = (row?.state as unknown as Held | undefined) ?? null;
    }
    return this.held;
  }

  /** The snapshot in force, asking the tenant only when this agent holds none that it can trust. */
  async current(agent: { agentId: string; kind: string }): Promise<AgentSnapshot> {
    const held = this.read();
    if (held && this.now() - held.confirmedAtMs <= this.deps.maxAgeMs && held.snapshot.version >= this.newerThanHeld) return held.snapshot;
    this.apply(await this.deps.load(agent));
    return this.read()!.snapshot;
  }

  /** Stores a pushed or fetched snapshot unless a newer one is held; true when it is now the one in force. */
  apply(snapshot: AgentSnapshot): boolean {
    const held = this.read();
    if (held && held.snapshot.version > snapshot.version) return false;
    const next: Held = { snapshot, confirmedAtMs: this.now() };
    const state = next as unknown as Record<string, unknown>;
    this.deps.db.insert(schema.counters).values({ key: KEY, state }).onConflictDoUpdate({ target: schema.counters.key, set: { state } }).run();
    this.held = next;
    return true;
  }

  /**
   * The tenant named its current version at `atMs` (a wake it queued carries it): holding that version (or a newer,
   * pushed one), the snapshot counts as confirmed then; an older one is fetched before the next check. Kept in
   * memory only — after an eviction the stored confirmation time applies, which can only cost a fetch.
   */
  confirm(version: number, atMs: number): void {
    const held = this.read();
    if (!held || held.snapshot.version < version) return this.noteVersion(version);
    if (atMs > held.confirmedAtMs && atMs <= this.now()) this.held = { ...held, confirmedAtMs: atMs };
  }

  /** The tenant's current version as a run report answered it: a newer one is fetched before the next check. */
  noteVersion(version: number): void {
    if (version > (this.read()?.snapshot.version ?? 0)) this.newerThanHeld = Math.max(this.newerThanHeld, version);
  }

  /** The version held (0: none), for tests and the export. */
  version(): number {
    return this.read()?.snapshot.version ?? 0;
  }
}
