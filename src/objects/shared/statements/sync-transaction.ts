/**
 * `fn` in one SQLite transaction of the object's storage, as drizzle's `db.transaction` runs it, without the drizzle
 * transaction object that call builds first (issue 12 §8, session 11): its constructor sets up a relational query
 * builder for every table of the schema, on every call, for callbacks that never use it. Nested calls nest as
 * drizzle's did (both are the storage's `transactionSync`). Only for callbacks that run prepared statements or
 * the object's `db` itself, not a `tx` argument.
 */
export function syncTransaction<T>(db: object, fn: () => T): T {
  // `$client`: the storage drizzle was opened on (sqlite.ts: the object's, or its row-metering wrapper).
  return (db as { $client: Pick<DurableObjectStorage, "transactionSync"> }).$client.transactionSync(fn);
}
