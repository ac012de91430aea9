import { z } from "@hono/zod-openapi";
import { REPORT_SCOPES } from "../../core/memory/reports";
import { IsoTimestamp, PaginationQuery } from "../common";

export const ReportScopeParam = z.enum(REPORT_SCOPES).openapi({ param: { name: "scope", in: "path" }, description: "current, daily, weekly or monthly" });

/** An immutable `AgentReport` (seed 000); `sourceCursor` is the processed cursor it was built from. */
export const Report = z
  .object({
    id: z.string(),
    agentId: z.string(),
    scope: z.enum(REPORT_SCOPES),
    periodKey: z.string(),
    content: z.record(z.string(), z.unknown()),
    confidence: z.number().nullable(),
    provenance: z.record(z.string(), z.unknown()),
    sourceCursor: z.record(z.string(), z.number().int()),
    createdAt: IsoTimestamp,
  })
  .openapi("Report");
export type Report = z.infer<typeof Report>;

export const FreshnessReason = z
  .object({
    code: z.enum(["no_report", "head_mismatch", "max_age_exceeded", "source_cursor_behind"]),
    ageMs: z.number().optional(),
    maxAgeMs: z.number().optional(),
    sources: z.array(z.string()).optional(),
    headReportId: z.string().optional(),
    reportId: z.string().nullable().optional(),
  })
  .openapi("ReportFreshnessReason");

export const ReportFreshness = z
  .object({ fresh: z.boolean(), reasons: z.array(FreshnessReason), ageMs: z.number().int().nullable() })
  .openapi("ReportFreshness");

/** A scope's head: its report, when the head last moved or was re-confirmed, and the freshness verdict. */
export const ReportHeadView = Report.extend({ headUpdatedAt: IsoTimestamp, freshness: ReportFreshness }).openapi("ReportHead");
export type ReportHeadView = z.infer<typeof ReportHeadView>;

export const ListReportsQuery = PaginationQuery.extend({ scope: z.enum(REPORT_SCOPES).optional() });
export type ListReportsQuery = z.infer<typeof ListReportsQuery>;
