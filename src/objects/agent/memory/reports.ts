import { and, desc, eq, sql } from "drizzle-orm";
import type { InferSelectModel } from "drizzle-orm";
import {
  buildReport,
  publishReport,
  REPORT_SCOPES,
  reportFreshness,
  reportHeadId,
  type AgentReport,
  type AgentReportHead,
  type ReportCursor,
  type ReportFreshness,
  type ReportScope,
} from "../../../core/memory/reports";
import * as schema from "../../../db/agent-schema";
import { failure, type Result } from "../../../core/runtime/result";
import { decodeCursor, encodeCursor, type Page } from "../../../schema/common";
import type { ListReportsQuery, Report, ReportHeadView } from "../../../schema/agents/reports";
import { z } from "zod";
import { keysetPage } from "../../shared/keyset";
import type { AgentDb } from "../types";

/** What a publish did: `created` is true only when a new immutable report row was written. */
export type PublishOutcome =
  | { ok: true; action: "create" | "update" | "confirm"; created: boolean; report: AgentReport; head: AgentReportHead }
  | { ok: false; code: "invalid_report" | "scope_mismatch" | "report_older_than_head"; message: string };

/** A publish request; without `sourceCursor` the report is stamped with the agent's processed cursor now. */
export interface ReportDraftInput {
  scope: string;
  periodKey?: string;
  content: Record<string, unknown>;
  confidence?: number | null;
  provenance?: Record<string, unknown>;
  sourceCursor?: ReportCursor;
}

/** The source key of the processed cursor (see `processedCursor`). */
export const WAKES_SOURCE = "wakes";

export const isReportScope = (scope: string): scope is ReportScope => (REPORT_SCOPES as readonly string[]).includes(scope);

const HEADS = (db: AgentDb) => db.select().from(schema.reportHeads).prepare();

/**
 * The agent's reports: immutable `reports` rows and one `report_heads` row per scope; the rules
 * (ids, head moves, freshness) are src/core/memory/reports.ts.
 */
export class Reports {
  /** Every run's context reads the heads (issue 12 §8): built once. */
  private readonly headsQuery;

  constructor(
    private readonly db: AgentDb,
    private readonly agentId: () => string,
  ) {
    this.headsQuery = HEADS(db);
  }

  /**
   * The agent's processed cursor, `{wakes: n}`: n is the event seq of the latest first-attempt
   * `run.started`, i.e. it advances once per wake the agent takes in (a resumed or retried run does
   * not move it). A report published in a run carries that run's cursor, so it stays fresh after its
   * own run ends and goes stale by events when the next wake is processed. (The state revision would
   * not do: every run bumps it at its end, after the publish, so a report would be stale at once.)
   * Reads backwards from the newest event and stops at the first match.
   */
  processedCursor(): ReportCursor {
    // A row's events have consecutive seqs from the row's: the item's index is its offset.
    const row = this.db.get<{ seq: number } | undefined>(sql`SELECT "events"."seq" + "item"."key" AS "seq" FROM "events", json_each("events"."items") AS "item"
      WHERE "item"."value" ->> '$[0]' = 'run.started' AND "item"."value" -> '$[2]' ->> '$.attempt' = 1 ORDER BY "events"."seq" DESC, "item"."key" DESC LIMIT 1`);
    return { [WAKES_SOURCE]: row?.seq ?? 0 };
  }

  /** Builds the report, writes its row once (immutable; a replay finds it) and moves or re-confirms the head, atomically. */
  publish(input: ReportDraftInput, nowMs = Date.now()): PublishOutcome {
    const agentId = this.agentId();
    const built = buildReport(agentId, { ...input, sourceCursor: input.sourceCursor ?? this.processedCursor() }, nowMs);
    if (!built.ok) return { ok: false, code: "invalid_report", message: built.issues.map((issue) => `${issue.path || "report"}: ${issue.message}`).join("; ") };
    const report = built.report;
    return this.publishBuilt(agentId, report, nowMs);
  }

  private publishBuilt(agentId: string, report: AgentReport, nowMs: number): PublishOutcome {
    return this.db.transaction((tx): PublishOutcome => {
      const headRow = tx.select().from(schema.reportHeads).where(eq(schema.reportHeads.scope, report.scope)).get();
      const head = headRow ? toHead(agentId, headRow) : null;
      const headReportRow = headRow ? tx.select().from(schema.reports).where(eq(schema.reports.id, headRow.reportId)).get() : undefined;
      const result = publishReport(head, headReportRow ? toReport(agentId, headReportRow) : null, report, nowMs);
      if (result.action === "rejected") {
        const message = result.code === "report_older_than_head" ? "the report was built from older sources than the current head's report" : "the head belongs to another scope";
        return { ok: false, code: result.code, message };
      }
      const inserted = tx
        .insert(schema.reports)
        .values({
          id: report.id,
          scope: report.scope,
          periodKey: report.periodKey,
          content: report.content,
          confidence: report.confidence,
          provenance: report.provenance,
          sourceCursor: { ...report.sourceCursor },
          createdAt: report.createdAt,
        })
        .onConflictDoNothing()
        .returning({ id: schema.reports.id })
        .all();
      tx.insert(schema.reportHeads)
        .values({ scope: report.scope, reportId: result.head.reportId, updatedAt: result.head.updatedAt })
        .onConflictDoUpdate({ target: schema.reportHeads.scope, set: { reportId: result.head.reportId, updatedAt: result.head.updatedAt } })
        .run();
      // An existing row (same id) is the same report; return it as first written.
      const stored = tx.select().from(schema.reports).where(eq(schema.reports.id, report.id)).get()!;
      return { ok: true, action: result.action, created: inserted.length > 0, report: toReport(agentId, stored), head: result.head };
    });
  }

  /**
   * The head of the first of `scopes` (in that order) that has a head and a report, as `head` gives it:
   * one read of the heads table for all scopes, since a run's context asks for four that mostly do not exist.
   */
  firstHead(
    scopes: ReadonlyArray<ReportScope>,
    nowMs = Date.now(),
    /** The heads table when the caller already read it (a run context reads it with its summaries: memory-context.ts). */
    heads: ReadonlyArray<InferSelectModel<typeof schema.reportHeads>> = this.headsQuery.all(),
  ): { head: AgentReportHead; report: AgentReport; freshness: ReportFreshness } | null {
    // One row per scope at most, so the whole table is the read.
    const rows = heads.filter((row) => (scopes as ReadonlyArray<string>).includes(row.scope));
    if (rows.length === 0) return null;
    const agentId = this.agentId();
    for (const scope of scopes) {
      const headRow = rows.find((row) => row.scope === scope);
      const row = headRow && this.db.select().from(schema.reports).where(eq(schema.reports.id, headRow.reportId)).get();
      if (!headRow || !row) continue;
      const head = toHead(agentId, headRow);
      const report = toReport(agentId, row);
      return { head, report, freshness: reportFreshness(head, report, nowMs, this.processedCursor()) };
    }
    return null;
  }

  /** The scope's head, its report and the freshness verdict at `nowMs` against the processed cursor; null without a head. */
  head(scope: ReportScope, nowMs = Date.now()): { head: AgentReportHead; report: AgentReport | null; freshness: ReportFreshness } | null {
    const agentId = this.agentId();
    const headRow = this.db.select().from(schema.reportHeads).where(eq(schema.reportHeads.scope, scope)).get();
    if (!headRow) return null;
    const head = toHead(agentId, headRow);
    const row = this.db.select().from(schema.reports).where(eq(schema.reports.id, headRow.reportId)).get();
    const report = row ? toReport(agentId, row) : null;
    return { head, report, freshness: reportFreshness(head, report, nowMs, this.processedCursor()) };
  }

  /** `GET …/reports/:scope`: validates the scope, then the head view. */
  headOf(scope: string, nowMs: number): Result<{ report: ReportHeadView }> {
    return isReportScope(scope) ? this.headView(scope, nowMs) : failure("validation_failed", `scope must be one of current, daily, weekly, monthly`);
  }

  /** The API view of a scope's head; not_found when the scope has never been published. */
  headView(scope: ReportScope, nowMs = Date.now()): Result<{ report: ReportHeadView }> {
    const current = this.head(scope, nowMs);
    if (!current?.report) return failure("not_found", `no ${scope} report`);
    return { ok: true, report: { ...toView(current.report), headUpdatedAt: new Date(current.head.updatedAt).toISOString(), freshness: current.freshness } };
  }

  /** Every report ever published (optionally one scope), newest first, keyset-paginated on (createdAt, id). */
  list(query: ListReportsQuery): Result<Page<Report>> {
    const before = decodeCursor(query.cursor, z.object({ c: z.number().int(), i: z.string() }));
    if (query.cursor && !before) return failure("validation_failed", "cursor is not valid");
    const agentId = this.agentId();
    const r = schema.reports;
    const { rows, last } = keysetPage(this.db, { table: r, sort: r.createdAt, tieBreak: r.id, order: "desc", where: [query.scope ? eq(r.scope, query.scope) : undefined], limit: query.limit, from: before });
    return { ok: true, data: rows.map((row) => toView(toReport(agentId, row))), nextCursor: last ? encodeCursor({ c: last.createdAt, i: last.id }) : null };
  }
}

function toReport(agentId: string, row: InferSelectModel<typeof schema.reports>): AgentReport {
  return {
    id: row.id,
    agentId,
    scope: row.scope as ReportScope,
    periodKey: row.periodKey,
    createdAt: row.createdAt,
    content: row.content,
    confidence: row.confidence,
    provenance: row.provenance,
    sourceCursor: row.sourceCursor,
  };
}

function toHead(agentId: string, row: InferSelectModel<typeof schema.reportHeads>): AgentReportHead {
  const scope = row.scope as ReportScope;
  return { id: reportHeadId(agentId, scope), agentId, scope, reportId: row.reportId, updatedAt: row.updatedAt };
}

function toView(report: AgentReport): Report {
  return { ...report, sourceCursor: { ...report.sourceCursor }, createdAt: new Date(report.createdAt).toISOString() };
}
