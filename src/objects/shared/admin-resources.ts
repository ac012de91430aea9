import { failure, type Result } from "../../core/runtime/result";
import type { Page } from "../../schema/common";
import { cursorPage, type Slice, textKeyCursor } from "./paging";

/** A store of resources the admin API manages by id, listed by a `(createdAt, id)` keyset (webhook endpoints, webhook sources). */
export interface AdminResourceStore<Row> {
  list(limit: number, after: { c: string; i: string } | undefined): Slice<Row>;
  get(id: string): Row | null;
  delete(id: string): Row | null;
}

/** How answers and the audit name one kind of resource: `{ endpoint }`, "webhook not found", `webhook.deleted`. */
export interface AdminResourceNames<Key extends string> {
  key: Key;
  /** The noun of the not_found message. */
  noun: string;
  /** The audit action of a delete. */
  deleted: string;
}

/** List, get and delete (audited) of one kind of tenant resource: the same rules for every resource the admin API manages by id. */
export class AdminResources<Row, Key extends string> {
  constructor(
    private readonly store: AdminResourceStore<Row>,
    private readonly names: AdminResourceNames<Key>,
    private readonly audit: (actor: string, action: string, target: string | null, detail: Record<string, unknown>) => void,
  ) {}

  list(query: { limit: number; cursor?: string | undefined }): Result<Page<Row>> {
    return cursorPage(query.cursor, textKeyCursor, (after) => this.store.list(query.limit, after));
  }

  get(id: string): Result<Record<Key, Row>> {
    return this.answer(this.store.get(id));
  }

  delete(actor: string, id: string): Result<Record<Key, Row>> {
    const row = this.store.delete(id);
    if (row) this.audit(actor, this.names.deleted, id, {});
    return this.answer(row);
  }

  private answer(row: Row | null): Result<Record<Key, Row>> {
    if (!row) return failure("not_found", `${this.names.noun} not found`);
    return { ok: true, ...({ [this.names.key]: row } as Record<Key, Row>) };
  }
}
