import { describe, expect, it } from "vitest";
import { billedRows, meterStatements, statementsRun, statementTable, uncounted, type Executes } from "../../src/objects/shared/seams/statement-meter";

/** The part of SqlStorage the meter touches: `exec`, answering which query it ran. */
function fakeSql(): Executes & { ran: string[] } {
  const ran: string[] = [];
  return { ran, exec: (query: string) => (ran.push(query), query) };
}

describe("statement meter (bench seam)", () => {
  it("counts each exec once and still runs it", () => {
    const sql = fakeSql();
    expect(statementsRun(sql)).toBeNull();
    meterStatements(sql);
    meterStatements(sql); // a second wrap would count twice
    expect(sql.exec("SELECT 1") as unknown).toBe("SELECT 1");
    sql.exec("SELECT 2");
    expect(statementsRun(sql)).toBe(2);
    expect(sql.ran).toEqual(["SELECT 1", "SELECT 2"]);
  });

  it("leaves out what runs inside uncounted, even when it throws", () => {
    const sql = fakeSql();
    meterStatements(sql);
    sql.exec("SELECT 1");
    expect(uncounted(sql, () => (sql.exec("SELECT count(*) FROM a"), sql.exec("SELECT count(*) FROM b"), 7))).toBe(7);
    expect(() =>
      uncounted(sql, () => {
        sql.exec("SELECT 3");
        throw new Error("boom");
      }),
    ).toThrow("boom");
    sql.exec("SELECT 4");
    expect(statementsRun(sql)).toBe(2);
    expect(sql.ran).toHaveLength(5);
  });

  it("keeps objects apart", () => {
    const a = fakeSql();
    const b = fakeSql();
    meterStatements(a);
    meterStatements(b);
    a.exec("SELECT 1");
    expect([statementsRun(a), statementsRun(b)]).toEqual([1, 0]);
  });

  it("sums each cursor's billed rows when they are read, charged to the table the statement writes or reads", () => {
    // A cursor's counts grow while it is consumed: these grow after exec returned, as a real one does.
    const cursors: { rowsRead: number; rowsWritten: number }[] = [];
    const sql: Executes = { exec: () => (cursors.push({ rowsRead: 0, rowsWritten: 0 }), cursors.at(-1)) };
    expect(billedRows(sql)).toBeNull();
    meterStatements(sql);
    sql.exec("INSERT INTO messages (id) VALUES (?)");
    sql.exec('UPDATE "runs" SET status = ? WHERE run_key = ?');
    sql.exec("SELECT * FROM messages WHERE thread_id = ?");
    Object.assign(cursors[0]!, { rowsRead: 1, rowsWritten: 4 });
    Object.assign(cursors[1]!, { rowsRead: 2, rowsWritten: 2 });
    Object.assign(cursors[2]!, { rowsRead: 9 });
    expect(billedRows(sql)).toEqual({
      statements: 3,
      rowsRead: 12,
      rowsWritten: 6,
      byTable: { messages: { statements: 2, rowsRead: 10, rowsWritten: 4 }, runs: { statements: 1, rowsRead: 2, rowsWritten: 2 } },
    });
    // What runs inside uncounted is left out of the rows too.
    uncounted(sql, () => void Object.assign(sql.exec("SELECT count(*) FROM messages") as object, { rowsRead: 500 }));
    expect(billedRows(sql)?.rowsRead).toBe(12);
  });

  it("names the table of a write before the tables it reads", () => {
    expect(statementTable("WITH x AS (SELECT 1) INSERT OR REPLACE INTO counters (key) SELECT * FROM x")).toBe("counters");
    expect(statementTable("DELETE FROM events WHERE seq IN (SELECT seq FROM events LIMIT 5)")).toBe("events");
    expect(statementTable("select id from `agent_state`")).toBe("agent_state");
    expect(statementTable("PRAGMA table_info(x)")).toBe("(PRAGMA)");
  });
});
