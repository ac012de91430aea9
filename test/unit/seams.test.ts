import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { benchSeamsEnabled, seamOn, TEST_SEAMS, testOnly, testSeamsEnabled } from "../../src/core/runtime/seams";

const ROOT = join(__dirname, "..", "..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : [];
  });
}

describe("the seam guard (src/core/runtime/seams.ts)", () => {
  it("opens a seam only for the exact value enabled", () => {
    for (const value of [undefined, "", "Enabled", "enabled ", "true", "1"]) {
      expect(testSeamsEnabled({ VIGIL_FAULTS: value })).toBe(false);
      expect(benchSeamsEnabled({ VIGIL_BENCH: value })).toBe(false);
    }
    expect(testSeamsEnabled({ VIGIL_FAULTS: "enabled" })).toBe(true);
    expect(benchSeamsEnabled({ VIGIL_BENCH: "enabled" })).toBe(true);
    // The two switches are independent: bench does not open the test seams, nor the reverse.
    expect(testSeamsEnabled({ VIGIL_BENCH: "enabled" } as { VIGIL_FAULTS?: string })).toBe(false);
    expect(benchSeamsEnabled({ VIGIL_FAULTS: "enabled" } as { VIGIL_BENCH?: string })).toBe(false);
  });

  it("opens one seam when VIGIL_FAULTS lists it, every seam with enabled, none for anything else", () => {
    expect(seamOn({ VIGIL_FAULTS: "faults" }, "faults")).toBe(true);
    expect(seamOn({ VIGIL_FAULTS: "faults" }, "clocks")).toBe(false);
    expect(seamOn({ VIGIL_FAULTS: "dumps,settings" }, "settings")).toBe(true);
    expect(seamOn({ VIGIL_FAULTS: "dumps,settings" }, "faults")).toBe(false);
    for (const seam of TEST_SEAMS) {
      expect(seamOn({ VIGIL_FAULTS: "enabled" }, seam)).toBe(true);
      for (const value of [undefined, "", "Enabled", ` ${seam}`, `${seam.toUpperCase()}`, "all"]) expect(seamOn({ VIGIL_FAULTS: value }, seam)).toBe(false);
    }
    // A list is not "every seam": the deploy check's refusal of VIGIL_FAULTS covers it, testSeamsEnabled does not.
    expect(testSeamsEnabled({ VIGIL_FAULTS: TEST_SEAMS.join(",") })).toBe(false);
  });

  it("passes a test-only setting through only when the settings seam is on", () => {
    expect(testOnly({ VIGIL_FAULTS: "enabled" }, "2000")).toBe("2000");
    expect(testOnly({ VIGIL_FAULTS: "settings" }, "2000")).toBe("2000");
    expect(testOnly({ VIGIL_FAULTS: "faults" }, "2000")).toBeUndefined();
    expect(testOnly({}, "2000")).toBeUndefined();
    expect(testOnly({ VIGIL_FAULTS: "disabled" }, "2000")).toBeUndefined();
  });

  it("is the only reader of VIGIL_FAULTS and VIGIL_BENCH in src/", () => {
    const readers = sources(join(ROOT, "src"))
      .filter((file) => /\.VIGIL_(FAULTS|BENCH)\b|\["VIGIL_(FAULTS|BENCH)"\]/.test(readFileSync(file, "utf8")))
      .map((file) => relative(ROOT, file).split("\\").join("/"));
    expect(readers).toEqual(["src/core/runtime/seams.ts"]);
  });
});
