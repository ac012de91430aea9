import { desc, eq } from "drizzle-orm";
import { H } from "../../core/hash";
import * as schema from "../../db/tenant-schema";
import { nowIso } from "../sqlite";
import type { TenantDb } from "./types";

export interface QuestionRequest {
  agentId: string;
  operationId: string;
  runKey: string;
  question: string;
  options: unknown[];
  recommendedOptionId?: string;
  allowFreeText: boolean;
}

export interface DecisionRecord {
  id: string;
  agentId: string;
  runKey: string | null;
  operationId: string | null;
  type: string;
  status: string;
  payload: Record<string, unknown>;
  resolution: Record<string, unknown> | null;
  createdAt: string;
  resolvedAt: string | null;
}

/** Seed 002 decisions, tenant-wide. An ask_user question is a `decision/option` keyed by its operationId. */
export class Decisions {
  constructor(private readonly db: TenantDb) {}

  /** Opens (once) the decision for an ask_user call; a replayed call returns the same decision. */
  openQuestion(request: QuestionRequest): string {
    const id = `dec_${H(request.operationId, "decision").slice(0, 24)}`;
    this.db
      .insert(schema.decisions)
      .values({
        id,
        agentId: request.agentId,
        runKey: request.runKey,
        operationId: request.operationId,
        type: "decision/option",
        status: "pending",
        payload: {
          kind: "ask_user",
          question: request.question,
          options: request.options,
          recommendedOptionId: request.recommendedOptionId ?? null,
          allowFreeText: request.allowFreeText,
        },
        createdAt: nowIso(),
      })
      .onConflictDoNothing()
      .run();
    return id;
  }

  list(limit: number, status?: string): DecisionRecord[] {
    return this.db
      .select()
      .from(schema.decisions)
      .where(status ? eq(schema.decisions.status, status) : undefined)
      .orderBy(desc(schema.decisions.createdAt))
      .limit(limit)
      .all();
  }
}
