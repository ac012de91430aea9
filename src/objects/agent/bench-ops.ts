import { sql } from "drizzle-orm";
import { config } from "../../config";
import { counters } from "../../db/common-schema";
import type { Result } from "../../http/error-codes";
import { randomId } from "../../ids";
import { nowIso } from "../sqlite";
import type { History } from "./history";
import type { AgentDb } from "./types";

/** Measurement loops for `npm run bench`; timed from outside, since workerd's clock stands still during sync work. */
export type BenchOp =
  | { op: "seed"; threadId: string; count: number }
  | { op: "appendAndAssemble"; threadId: string; iterations: number }
  | { op: "sqliteWrite"; iterations: number };

export function runBenchOp(db: AgentDb, history: History, op: BenchOp): Result<{ done: number }> {
  switch (op.op) {
    case "seed": {
      // Bulk rows straight into the table: seeding 100 000 messages must not take minutes.
      const createdAt = nowIso();
      db.transaction((tx) => {
        for (let i = 0; i < op.count; i++) {
          tx.run(
            sql`INSERT INTO messages (id, thread_id, kind, text, metadata, created_at) VALUES (${randomId("bm_", 24)}, ${op.threadId}, ${i % 2 ? "assistant" : "user"}, ${`seeded message ${i} with some ordinary text in it`}, '{}', ${createdAt})`,
          );
        }
      });
      return { ok: true, done: op.count };
    }
    case "appendAndAssemble": {
      for (let i = 0; i < op.iterations; i++) {
        history.append({ id: randomId("bm_", 24), threadId: op.threadId, kind: "user", text: `bench append ${i}` });
        history.window(op.threadId, config.run.contextWindowMessages);
      }
      return { ok: true, done: op.iterations };
    }
    case "sqliteWrite": {
      for (let i = 0; i < op.iterations; i++) {
        db.insert(counters).values({ key: `bench:${i}`, state: { i } }).onConflictDoUpdate({ target: counters.key, set: { state: { i } } }).run();
      }
      return { ok: true, done: op.iterations };
    }
  }
}
