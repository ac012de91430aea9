/**
 * `fn` in one SQLite transaction of the object's storage, as drizzle's `db.transaction` runs it, without the drizzle
 * transaction object that call builds first: its constructor sets up a relational query
 * builder for every table of the schema, on every call, for callbacks that never use it. Nested calls nest as
 * drizzle's did (both are the storage's `transactionSync`). Only for callbacks that run prepared statements or
 * the object's `db` itself, not a `tx` argument.
 */
export function syncTransaction<T>(db: object, fn: () => T): T {
  // `$client`: the storage drizzle was opened on (sqlite.ts: the object's, or its row-metering wrapper).
  return (db as { $client: Pick<DurableObjectStorage, "transactionSync"> }).$client.transactionSync(fn);
}

/**
 * Calls `listener` whenever a transaction of the object's storage throws, i.e. its writes were undone: for in-memory
 * copies of what was written that cannot tell a rolled-back write from a committed one. Every
 * transaction of the object goes through its storage's `transactionSync` (drizzle's and `syncTransaction` alike).
 */
export function onRollback(db: object, listener: () => void): void {
  const client = (db as { $client: Pick<DurableObjectStorage, "transactionSync"> }).$client;
  const known = rollbackListeners.get(client);
  if (known) {
    known.push(listener);
    return;
  }
  // The storage's transactionSync is wrapped once; every listener of the object hears each rollback from there.
  const listeners = [listener];
  rollbackListeners.set(client, listeners);
  const transactionSync = client.transactionSync.bind(client);
  client.transactionSync = <T>(fn: () => T): T => {
    try {
      return transactionSync(fn);
    } catch (error) {
      for (const heard of listeners) heard();
      throw error;
    }
  };
}

const rollbackListeners = new WeakMap<object, Array<() => void>>();
