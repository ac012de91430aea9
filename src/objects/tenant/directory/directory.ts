import { eq, isNull, sql, type SQL } from "drizzle-orm";
import * as schema from "../../../db/tenant-schema";
import type { Agent, AgentFilters } from "../../../schema/agents/agents";
import { nowIso } from "../../shared/sqlite";
import { pageByCreated } from "../../shared/keyset";
import type { TenantDb } from "../types";

/** The tenant's list of agents; the AgentDO pushes a fresh snapshot on every change. */
export class AgentDirectory {
  constructor(private readonly db: TenantDb) {}

  upsert(agent: Agent, parentId: string | null = null): void {
    const values = {
      id: agent.id,
      kind: agent.kind,
      displayName: agent.displayName,
      lifecycle: agent.lifecycle,
      parentId,
      record: agent as unknown as Record<string, unknown>,
      createdAt: agent.createdAt,
      updatedAt: nowIso(),
    };
    this.db
      .insert(schema.agentDirectory)
      .values(values)
      .onConflictDoUpdate({
        target: schema.agentDirectory.id,
        // A child's parentId is kept once known (lineage never changes; a caller without it passes null).
        set: { displayName: values.displayName, lifecycle: values.lifecycle, record: values.record, updatedAt: values.updatedAt, parentId: sql`coalesce(${schema.agentDirectory.parentId}, excluded.parent_id)` },
      })
      .run();
  }

  lifecycle(agentId: string): string | null {
    const d = schema.agentDirectory;
    return this.db.select({ lifecycle: d.lifecycle }).from(d).where(eq(d.id, agentId)).get()?.lifecycle ?? null;
  }

  /** Oldest first, keyset-paginated on (createdAt, id); children only when asked; narrowed by the filters given. */
  list(
    limit: number,
    after: { c: string; i: string } | undefined,
    includeChildren: boolean,
    filters: AgentFilters = {},
  ): { data: Agent[]; last: { c: string; i: string } | null } {
    const d = schema.agentDirectory;
    const children = includeChildren ? undefined : isNull(d.parentId);
    const where = [
      children,
      filters.lifecycle ? eq(d.lifecycle, filters.lifecycle) : undefined,
      filters.kind ? eq(d.kind, filters.kind) : undefined,
      filters.mode ? sql`json_extract(${d.record}, '$.mode') = ${filters.mode}` : undefined,
      filters.q ? nameOrIdContains(filters.q) : undefined,
    ];
    return pageByCreated(this.db, d, limit, after, (row) => row.record as unknown as Agent, where);
  }

  has(agentId: string): boolean {
    return !!this.db.select({ id: schema.agentDirectory.id }).from(schema.agentDirectory).where(eq(schema.agentDirectory.id, agentId)).get();
  }

  /** Every agent that can still run (tenant snapshot pushes reach these). */
  liveAgents(): Array<{ agentId: string; kind: string }> {
    const d = schema.agentDirectory;
    return this.db.select({ agentId: d.id, kind: d.kind }).from(d).where(sql`${d.lifecycle} <> 'destroyed'`).all();
  }
}

/** The display name or the id contains `text`, case-insensitively (LIKE's own characters in it escaped). */
function nameOrIdContains(text: string): SQL {
  const d = schema.agentDirectory;
  const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
  return sql`(lower(${d.displayName}) LIKE ${pattern} ESCAPE '\\' OR lower(${d.id}) LIKE ${pattern} ESCAPE '\\')`;
}
