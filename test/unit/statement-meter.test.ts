import { describe, expect, it } from "vitest";
import { meterStatements, statementsRun, uncounted, type Executes } from "../../src/objects/shared/seams/statement-meter";

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
});
