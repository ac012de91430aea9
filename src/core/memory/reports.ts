/**
 * Immutable `AgentReport` snapshots and their per-scope `AgentReportHead` (seed 000 §2), with
 * the dual-trigger freshness contract (seed 000 Phase -1A): stale when older than the scope's max age,
 * or when the agent has processed source events newer than the report's source cursor.
 */
import { z } from "zod";
import { canonicalJson, H } from "../ids/hash";
import { sha256Hex } from "../ids/sha256";

export const REPORT_SCOPES = ["current", "daily", "weekly", "monthly"] as const;
export type ReportScope = (typeof REPORT_SCOPES)[number];

/**
 * A processed-events watermark: source key → monotonic counter, the shape of seed 000
 * `processedCounterByHost`. A missing key counts as 0.
 */
export type ReportCursor = Readonly<Record<string, number>>;

/** Seed 000 `AgentReport`, immutable once built; `sourceCursor` is what the report was built from. */
export interface AgentReport {
  id: string;
  agentId: string;
  scope: ReportScope;
  /** Which period a periodic report covers (`2026-05-01`, `2026-W18`, `2026-05`); "" for `current`. */
  periodKey: string;
  createdAt: number;
  content: Record<string, unknown>;
  confidence: number | null;
  provenance: Record<string, unknown>;
  sourceCursor: ReportCursor;
}

/** Seed 000 `AgentReportHead`: the latest report pointer of one scope. */
export interface AgentReportHead {
  id: string;
  agentId: string;
  scope: ReportScope;
  reportId: string;
  /** When the head last moved to, or re-confirmed, its report; freshness ages from here. */
  updatedAt: number;
}

/** Max age per scope before a report is stale by time (see docs/decisions/memory-core.md). */
export const DEFAULT_REPORT_MAX_AGE_MS: Readonly<Record<ReportScope, number>> = {
  current: 24 * 3_600_000,
  daily: 36 * 3_600_000,
  weekly: 8 * 24 * 3_600_000,
  monthly: 32 * 24 * 3_600_000,
};

/** What `publish_report` and the API accept; the id and timestamps are derived, never supplied. */
export const reportDraftSchema = z.object({
  scope: z.enum(REPORT_SCOPES),
  periodKey: z.string().max(32).default(""),
  content: z.record(z.string(), z.json()),
  confidence: z.number().min(0).max(1).nullable().default(null),
  provenance: z.record(z.string(), z.json()).default({}),
  sourceCursor: z.record(z.string(), z.number().int().min(0)).default({}),
});
export type ReportDraft = z.output<typeof reportDraftSchema>;

/**
 * Deterministic report id: `H(agentId, scope, periodKey, sha256Hex(canonicalJson(body)))` with body =
 * `{content, confidence, provenance, sourceCursor}`. A replayed publish yields the same id, so it
 * cannot create a second report.
 */
export function reportId(agentId: string, draft: ReportDraft): string {
  const { content, confidence, provenance, sourceCursor } = draft;
  return H(agentId, draft.scope, draft.periodKey, sha256Hex(canonicalJson({ content, confidence, provenance, sourceCursor })));
}

/** One head per (agent, scope). */
export function reportHeadId(agentId: string, scope: ReportScope): string {
  return H(agentId, "reportHead", scope);
}

/** Validates a draft and freezes it into a report. */
export function buildReport(
  agentId: string,
  draft: unknown,
  now: number,
): { ok: true; report: AgentReport } | { ok: false; code: "invalid_report"; issues: Array<{ path: string; message: string }> } {
  const parsed = reportDraftSchema.safeParse(draft);
  if (!parsed.success) {
    return { ok: false, code: "invalid_report", issues: parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message })) };
  }
  const data = parsed.data;
  return {
    ok: true,
    report: {
      id: reportId(agentId, data),
      agentId,
      scope: data.scope,
      periodKey: data.periodKey,
      createdAt: now,
      content: data.content as Record<string, unknown>,
      confidence: data.confidence,
      provenance: data.provenance as Record<string, unknown>,
      sourceCursor: data.sourceCursor,
    },
  };
}

/** Partial order of cursors; "concurrent" when each is ahead on some source. */
export function compareCursors(a: ReportCursor, b: ReportCursor): "equal" | "before" | "after" | "concurrent" {
  let behind = false;
  let ahead = false;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const left = a[key] ?? 0;
    const right = b[key] ?? 0;
    if (left < right) behind = true;
    if (left > right) ahead = true;
  }
  if (behind && ahead) return "concurrent";
  return behind ? "before" : ahead ? "after" : "equal";
}

/** The head to write, or why the report may not become the head. */
export type PublishResult =
  | { action: "create" | "update" | "confirm"; head: AgentReportHead }
  | { action: "rejected"; code: "scope_mismatch" | "report_older_than_head" };

/**
 * Moves the scope's head to a new report. Publishing the head's own report again re-confirms it
 * (`updatedAt` = now) instead of creating a duplicate; a report built from strictly older sources than
 * the head's report is rejected, so the head never moves back in source time.
 */
export function publishReport(
  head: AgentReportHead | null,
  headReport: AgentReport | null,
  report: AgentReport,
  now: number,
): PublishResult {
  if (head && (head.scope !== report.scope || head.agentId !== report.agentId)) return { action: "rejected", code: "scope_mismatch" };
  if (!head) {
    return { action: "create", head: { id: reportHeadId(report.agentId, report.scope), agentId: report.agentId, scope: report.scope, reportId: report.id, updatedAt: now } };
  }
  if (head.reportId === report.id) return { action: "confirm", head: { ...head, updatedAt: Math.max(head.updatedAt, now) } };
  if (headReport && headReport.id === head.reportId && compareCursors(report.sourceCursor, headReport.sourceCursor) === "before") {
    return { action: "rejected", code: "report_older_than_head" };
  }
  return { action: "update", head: { ...head, reportId: report.id, updatedAt: now } };
}

/** Why a report is not fresh; `sources` names the cursor keys that moved past it. */
export type FreshnessReason =
  | { code: "no_report" }
  | { code: "head_mismatch"; headReportId: string; reportId: string | null }
  | { code: "max_age_exceeded"; ageMs: number; maxAgeMs: number }
  | { code: "source_cursor_behind"; sources: string[] };

/** Freshness verdict; `ageMs` is null when there is no matching report. */
export interface ReportFreshness {
  fresh: boolean;
  reasons: FreshnessReason[];
  ageMs: number | null;
}

/**
 * Dual-trigger freshness: stale by time when `now − head.updatedAt` exceeds the scope's max age; stale
 * by events when `processedCursor` is ahead of the report's `sourceCursor` on any source. Both reasons
 * are reported when both hold.
 */
export function reportFreshness(
  head: AgentReportHead | null,
  report: AgentReport | null,
  now: number,
  processedCursor: ReportCursor,
  maxAgeMs: Readonly<Record<ReportScope, number>> = DEFAULT_REPORT_MAX_AGE_MS,
): ReportFreshness {
  if (!head) return { fresh: false, reasons: [{ code: "no_report" }], ageMs: null };
  if (!report || report.id !== head.reportId) {
    return { fresh: false, reasons: [{ code: "head_mismatch", headReportId: head.reportId, reportId: report?.id ?? null }], ageMs: null };
  }
  const reasons: FreshnessReason[] = [];
  // A clock step backwards must not make a report look fresher than brand new.
  const ageMs = Math.max(0, now - head.updatedAt);
  if (ageMs > maxAgeMs[report.scope]) reasons.push({ code: "max_age_exceeded", ageMs, maxAgeMs: maxAgeMs[report.scope] });
  const sources = Object.keys(processedCursor)
    .filter((key) => (processedCursor[key] ?? 0) > (report.sourceCursor[key] ?? 0))
    .sort();
  if (sources.length > 0) reasons.push({ code: "source_cursor_behind", sources });
  return { fresh: reasons.length === 0, reasons, ageMs };
}

/** Deterministic text for a run's context: `content.text` when present, else the canonical JSON. */
export function renderReport(report: AgentReport): string {
  const body = typeof report.content.text === "string" ? report.content.text : canonicalJson(report.content);
  return `[${report.scope} report${report.periodKey ? ` ${report.periodKey}` : ""}] ${body}`;
}
