type TransactionalClient = Pick<DurableObjectStorage, "transactionSync">;

/**
 * Work that may run only once what it reports is committed: live SSE frames. Outside a transaction the work runs at
 * once (the statement that wrote its row has committed); inside one it runs when the outermost transaction commits,
 * in the order it was queued, and is dropped with a transaction (or a nested savepoint) that throws — so a subscriber
 * never sees a write that was rolled back, nor a seq that a later write then takes.
 */
export class CommitGate {
  /** One list per open transaction level, innermost last. */
  private readonly levels: Array<Array<() => void>> = [];

  constructor(client: TransactionalClient) {
    const transactionSync = client.transactionSync.bind(client);
    client.transactionSync = <T>(fn: () => T): T => {
      this.levels.push([]);
      let result: T;
      try {
        result = transactionSync(fn);
      } catch (error) {
        this.levels.pop();
        throw error;
      }
      const done = this.levels.pop()!;
      const outer = this.levels.at(-1);
      if (outer) outer.push(...done);
      else for (const work of done) runLogged(work);
      return result;
    };
  }

  /** Runs `work` now, or once the open transaction commits (never, if it rolls back). */
  afterCommit(work: () => void): void {
    const open = this.levels.at(-1);
    if (open) open.push(work);
    else work();
  }
}

/** The one gate of a database's storage (drizzle's `$client`: every transaction of the object goes through it). */
export function commitGate(db: object): CommitGate {
  const client = (db as { $client: TransactionalClient }).$client;
  let gate = gates.get(client);
  if (!gate) gates.set(client, (gate = new CommitGate(client)));
  return gate;
}

const gates = new WeakMap<object, CommitGate>();

/** A frame's push that throws must not undo the caller's committed transaction, nor stop the frames after it. */
function runLogged(work: () => void): void {
  try {
    work();
  } catch (error) {
    console.error(JSON.stringify({ level: "error", msg: "after-commit work failed", error: String(error) }));
  }
}
