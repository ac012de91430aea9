/**
 * Category scope of a tool call (seed 000 §4.1.2): the agent's `allowedCategoryIds`.
 * Deny by default: an empty list grants no category at all, and a record filed under no category
 * (an entry or a task-less time entry without one) is outside every scope. Day plans are the one
 * uncategorised container: any agent with some category may open one, and sees and changes only
 * the blocks and pinned tasks of its own categories.
 */
import { compareStrings } from "../wakes/tokens";

export class CategoryScope {
  private readonly ids: ReadonlySet<string>;

  constructor(allowedCategoryIds: Iterable<string>) {
    this.ids = new Set(allowedCategoryIds);
  }

  get isEmpty(): boolean {
    return this.ids.size === 0;
  }

  /** Whether a category is in scope; `null` (no category) never is. */
  has(categoryId: string | null | undefined): boolean {
    return typeof categoryId === "string" && this.ids.has(categoryId);
  }

  /** Whether a record is in scope: by its category, or — for a day plan — by the scope being non-empty. */
  covers(record: { type: string; categoryId: string | null }): boolean {
    return record.type === "day_plan" ? !this.isEmpty : this.has(record.categoryId);
  }

  /** The scope narrowed by an optional filter (ids outside the scope are ignored), sorted. */
  narrow(filter?: readonly string[]): string[] {
    const wanted = filter === undefined ? [...this.ids] : filter.filter((id) => this.ids.has(id));
    return [...new Set(wanted)].sort(compareStrings);
  }
}
