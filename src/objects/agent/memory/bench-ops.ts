import { sql } from "drizzle-orm";
import { counters } from "../../../db/common-schema";
import type { Result } from "../../../core/runtime/result";
import { randomId } from "../../../ids";
import { nowIso } from "../../shared/sqlite";
import { storageFootprint, type StorageFootprint } from "../../shared/storage-footprint";
import type { Compaction } from "../compaction";
import type { MemoryContext } from "./memory-context";
import type { History } from "./history";
import type { AgentDb } from "../types";
import { recallIndex } from "../rows";

/** Measurement loops for `npm run bench`; timed from outside, since workerd's clock stands still during sync work. */
export type BenchOp =
  | { op: "seed"; threadId: string; count: number }
  | { op: "appendAndAssemble"; threadId: string; iterations: number }
  /** One part of appendAndAssemble alone, to profile it (`bench/history.mjs` breakdown). */
  | { op: "profile"; part: "append" | "plan" | "assemble"; threadId: string; iterations: number }
  | { op: "compact"; threadId: string }
  | { op: "sqliteWrite"; iterations: number }
  | { op: "seedEvents"; count: number }
  | { op: "storage" };

/** The memory path a run takes (src/objects/agent/context.ts, compaction.ts): assemble the context; plan and work off compaction. */
export interface BenchMemory {
  assemble(threadId: string): void;
  /** What a run's "maybe compact" does: plan the thread, work off due jobs if that planned one. */
  afterAppend(threadId: string): Promise<void>;
  /** Plans only (no job is worked off). */
  plan(threadId: string): void;
  /** Plans and works off one bounded batch of due jobs; returns the summaries committed (0: caught up). */
  catchUp(threadId: string): Promise<number>;
}

/** The bench's memory path over the agent's own context assembly and compaction. */
export function benchMemory(context: MemoryContext, compaction: Compaction): BenchMemory {
  return {
    assemble: (threadId) => void context.modelMessages(threadId, ""),
    plan: (threadId) => void compaction.plan(threadId),
    afterAppend: async (threadId) => {
      if (compaction.plan(threadId) > 0) await compaction.pump();
    },
    catchUp: async (threadId) => {
      compaction.plan(threadId);
      return (await compaction.pump()).committed;
    },
  };
}

export async function runBenchOp(db: AgentDb, history: History, op: BenchOp, memory: BenchMemory, storage: SqlStorage): Promise<Result<{ done: number; footprint?: StorageFootprint }>> {
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
      // Indexed for recall as an aged agent's would be (rows/recall-index.ts): the timed ops then find no backlog.
      recallIndex(db).catchUp();
      return { ok: true, done: op.count };
    }
    case "appendAndAssemble": {
      for (let i = 0; i < op.iterations; i++) {
        history.append({ id: randomId("bm_", 24), threadId: op.threadId, kind: "user", text: `bench append ${i}` });
        // Compaction runs as it does after a run (inline here, amortized over the appends that overflow the hot tier).
        await memory.afterAppend(op.threadId);
        memory.assemble(op.threadId);
      }
      return { ok: true, done: op.iterations };
    }
    case "profile": {
      for (let i = 0; i < op.iterations; i++) {
        if (op.part === "append") history.append({ id: randomId("bm_", 24), threadId: op.threadId, kind: "user", text: `bench append ${i}` });
        else if (op.part === "plan") memory.plan(op.threadId);
        else memory.assemble(op.threadId);
      }
      return { ok: true, done: op.iterations };
    }
    case "compact": {
      // Catch-up after a bulk seed, one bounded batch per request (the client repeats until 0).
      return { ok: true, done: await memory.catchUp(op.threadId) };
    }
    case "sqliteWrite": {
      for (let i = 0; i < op.iterations; i++) {
        db.insert(counters).values({ key: `bench:${i}`, state: { i } }).onConflictDoUpdate({ target: counters.key, set: { state: { i } } }).run();
      }
      return { ok: true, done: op.iterations };
    }
    case "seedEvents": {
      // Ages the log (bench "streaming turn, 100 vs 100 000 events"): filler events dated now (inside the
      // retention window), marked as already forwarded to the tenant, as an old agent's would be.
      storage.exec(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO events (seq, last_seq, run_key, items, created_at)
         SELECT coalesce((SELECT max(last_seq) FROM events), 0) + i, coalesce((SELECT max(last_seq) FROM events), 0) + i, 'bench-old-' || (i / 10),
           json_array(json_array('state.changed', ?2, json('{"filler":true}'))), ?2 FROM n`,
        op.count,
        nowIso(),
      );
      const head = storage.exec<{ seq: number }>("SELECT max(last_seq) AS seq FROM events").one().seq;
      storage.exec("INSERT OR REPLACE INTO counters (key, state) VALUES ('tenant-stream:forwarded-seq', ?)", JSON.stringify({ seq: head }));
      return { ok: true, done: op.count };
    }
    case "storage":
      return { ok: true, done: 1, footprint: storageFootprint(storage) };
  }
}
