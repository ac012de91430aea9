/**
 * Ratings (seed 000 §4.2). A rating is filed under its target's category; day-plan ratings have
 * none and count, like day plans, for any agent with a category (but not under a category filter).
 * The summary's days are the tenant's local days of each rating's creation.
 */
import { zonedInstant } from "../../core/tools/day-plan-time";
import { RATING_TARGET_TYPES, type JournalType } from "../../schema/agents/journal";
import type { JournalRow } from "../../objects/tenant/journal";
import { fail, found, outOfScope, ratingOut, record, ref, written, type Args, type Found, type HandlerContext, type HandlerOutcome } from "./context";
import { liveOfType } from "./queries";

export function getRatingsSummary(args: Args<"get_ratings_summary">, ctx: HandlerContext): HandlerOutcome {
  const range = { fromIso: utcOf(args.from, ctx.timeZone), toIso: utcOf(nextDate(args.to), ctx.timeZone) };
  const types: readonly string[] = args.targetTypes ?? RATING_TARGET_TYPES;
  const categories = new Set(ctx.scope.narrow(args.categoryIds));
  const counts = (row: JournalRow) =>
    types.includes(String(row.data.targetType)) &&
    (row.categoryId !== null ? categories.has(row.categoryId) : row.data.targetType === "day_plan" && !ctx.scope.isEmpty && args.categoryIds === undefined);
  const ratings = liveOfType(ctx.journal.rows, "rating", range).filter(counts);
  const scores = ratings.map((row) => Number(row.data.score));
  const byScore = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 } as Record<1 | 2 | 3 | 4 | 5, number>;
  for (const score of scores) if (score >= 1 && score <= 5) byScore[score as 1 | 2 | 3 | 4 | 5] += 1;
  const byTargetType = Object.fromEntries(
    types.map((type) => {
      const ofType = ratings.filter((row) => row.data.targetType === type).map((row) => Number(row.data.score));
      return [type, { count: ofType.length, average: average(ofType) }];
    }),
  );
  return { ok: true, output: { count: scores.length, average: average(scores), byScore, byTargetType } };
}

export function getRatingForTarget(args: Args<"get_rating_for_target">, ctx: HandlerContext): HandlerOutcome {
  const target = ratingTarget(ctx, args.targetType, args.targetId);
  if (!target.ok) return target;
  const rating = ctx.journal.rows.findLive("rating", { targetId: target.value.id });
  const reads = [ref(target.value.type, target.value.id), ...(rating ? [ref("rating", rating.id)] : [])];
  return { ok: true, output: { rating: rating ? ratingOut(record(rating)) : null }, reads };
}

/** One rating per target: an existing one is updated (score, and the note when one is given). */
export function createOrUpdateRating(args: Args<"create_or_update_rating">, ctx: HandlerContext): HandlerOutcome {
  const target = ratingTarget(ctx, args.targetType, args.targetId);
  if (!target.ok) return target;
  const existing = ctx.journal.rows.findLive("rating", { targetId: target.value.id });
  const result = existing
    ? written(ctx.journal.patch("rating", existing.id, { version: existing.version, score: args.score, ...(args.note !== undefined ? { note: args.note } : {}) }))
    : written(ctx.journal.create("rating", { targetType: args.targetType, targetId: target.value.id, score: args.score, note: args.note }, ctx.newId("rating", "rating")));
  return result.ok ? { ok: true, output: { rating: ratingOut(result.value), created: !existing } } : result;
}

function ratingTarget(ctx: HandlerContext, type: JournalType, id: string): Found<JournalRow> {
  const target = ctx.journal.rows.live(id, type);
  if (!target) return fail("not_found", `targetId: no ${type.replace("_", " ")} ${id} exists`);
  return ctx.scope.covers(target) ? found(target) : outOfScope(`${type.replace("_", " ")} ${id}`);
}

const average = (scores: readonly number[]) => (scores.length === 0 ? null : Math.round((scores.reduce((sum, score) => sum + score, 0) / scores.length) * 100) / 100);

/** The UTC instant (toISOString form, comparable with stored timestamps) of local midnight of `date`. */
const utcOf = (date: string, timeZone: string) => new Date(zonedInstant(date, "00:00", timeZone)).toISOString();

function nextDate(date: string): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}
