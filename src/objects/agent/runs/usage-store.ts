import { eq, sql } from "drizzle-orm";
import { BUDGET_DIMENSIONS, emptyUsage, type BudgetDimension, type BudgetUsage, type BudgetWindow } from "../../../core/governance/budget";
import * as schema from "../../../db/agent-schema";
import type { AgentDb } from "../types";

const TOTAL = "";

const u = schema.usageDaily;
const DAY = (db: AgentDb) => db.select().from(u).where(eq(u.day, sql.placeholder("day"))).prepare();
const INCREMENT = (db: AgentDb) =>
  db
    .insert(u)
    .values({ day: sql.placeholder("day"), dimension: sql.placeholder("dimension"), subject: sql.placeholder("subject"), value: sql.placeholder("amount") })
    .onConflictDoUpdate({ target: [u.day, u.dimension, u.subject], set: { value: sql`${u.value} + excluded.${sql.identifier(u.value.name)}` } })
    .prepare();

/**
 * One agent's daily usage counters (SPEC §5 budgets) in its own SQLite: a row per (tenant-local day,
 * dimension, subject), incremented in place, so a day's window is one indexed read however many runs it saw.
 */
export class UsageStore {
  /** Every budget check reads the day and every model call adds to it (issue 12 §8): built once. */
  private readonly dayQuery;
  private readonly incrementStatement;

  constructor(private readonly db: AgentDb) {
    this.dayQuery = DAY(db);
    this.incrementStatement = INCREMENT(db);
  }

  /** Adds consumed resources to `day`; a tool call also counts against the tool's own day counter. */
  add(day: string, delta: Partial<BudgetUsage>, toolName?: string): void {
    for (const dimension of BUDGET_DIMENSIONS) {
      const amount = Math.max(0, Math.round(delta[dimension] ?? 0));
      if (amount > 0) this.increment(day, dimension, TOTAL, amount);
    }
    if (toolName !== undefined) this.increment(day, "toolCalls", toolName, Math.max(1, Math.round(delta.toolCalls ?? 1)));
  }

  window(day: string): BudgetWindow {
    return this.read(day);
  }

  private read(day: string): BudgetWindow {
    const usage = emptyUsage();
    const toolCallsByTool: Record<string, number> = {};
    for (const row of this.dayQuery.all({ day })) {
      if (row.subject === TOTAL) {
        if ((BUDGET_DIMENSIONS as readonly string[]).includes(row.dimension)) usage[row.dimension as BudgetDimension] = row.value;
      } else if (row.dimension === "toolCalls") {
        toolCallsByTool[row.subject] = row.value;
      }
    }
    return { dayKey: day, usage, toolCallsByTool };
  }

  private increment(day: string, dimension: string, subject: string, amount: number): void {
    this.incrementStatement.run({ day, dimension, subject, amount });
  }
}
