import type { AgentSnapshots, SnapshotAudience } from "./agent-snapshots";

/**
 * Changes agents' snapshots must reflect (policy, brakes, HTTP tools, MCP servers), collected as they
 * are made and pushed as one new version. A write that changes a snapshot is answered only after the
 * affected agents hold the new version, so a brake stops an agent's next wake at once.
 */
export class SnapshotChanges {
  private audiences: SnapshotAudience[] = [];

  constructor(private readonly snapshots: AgentSnapshots) {}

  /** A change agents' snapshots must reflect; `publish` pushes it. */
  changed(audience: SnapshotAudience): void {
    this.audiences.push(audience);
  }

  /** Pushes a new snapshot version to every agent the changes since the last push concern, and waits for the answers. */
  async publish(): Promise<void> {
    const audiences = this.audiences;
    if (audiences.length === 0) return;
    this.audiences = [];
    const first = audiences[0]!;
    const same = audiences.every((audience) => JSON.stringify(audience) === JSON.stringify(first));
    await this.snapshots.publish(same ? first : "all");
  }

  /**
   * Answers a write once the agents it concerns hold the new version. `audience` names what a successful
   * write changed (null: the part marked its changes itself, as brakes and brake decisions do).
   */
  async answer<T extends { ok: boolean }>(write: T | Promise<T>, audience: SnapshotAudience | null | ((result: T) => SnapshotAudience | null) = null): Promise<T> {
    const result = await write;
    const changed = typeof audience === "function" ? audience(result) : audience;
    if (result.ok && changed) this.changed(changed);
    await this.publish();
    return result;
  }
}
