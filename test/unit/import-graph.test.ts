import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");

interface Edge {
  target: string;
  specifier: string;
  runtime: boolean;
}
interface ImportGraphModule {
  runtimeCycles(graph: Map<string, Edge[]>): string[][];
  boundaryViolations(graph: Map<string, Edge[]>): string[];
}
const checker = (): Promise<ImportGraphModule> => import(pathToFileURL(join(ROOT, "scripts", "import-graph.mjs")).href) as Promise<ImportGraphModule>;
const file = (path: string) => join(ROOT, path);
const edge = (path: string, runtime = true): Edge => ({ target: file(path), specifier: path, runtime });

describe("the import rules of src/ (scripts/import-graph.mjs)", () => {
  it("hold today: no runtime import cycle, every feature folder entered through its index.ts", () => {
    const check = spawnSync(process.execPath, ["scripts/import-graph.mjs"], { cwd: ROOT, encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  }, 60_000);

  it("finds a runtime cycle, and not one closed only by a type import", async () => {
    const { runtimeCycles } = await checker();
    const a = "src/a.ts";
    const b = "src/b.ts";
    expect(runtimeCycles(new Map([[file(a), [edge(b)]], [file(b), [edge(a)]]]))).toEqual([[a, b]]);
    expect(runtimeCycles(new Map([[file(a), [edge(b)]], [file(b), [edge(a, false)]]]))).toEqual([]);
  });

  it("refuses a reach into another feature's file, and allows its index.ts and the feature's own files", async () => {
    const { boundaryViolations } = await checker();
    const wiring = file("src/objects/agent/wiring.ts");
    const loop = file("src/objects/agent/runs/run-loop.ts");
    expect(boundaryViolations(new Map([[wiring, [edge("src/objects/agent/memory/history.ts")]]]))).toEqual([
      "src/objects/agent/wiring.ts imports src/objects/agent/memory/history.ts (use src/objects/agent/memory/index.ts)",
    ]);
    expect(boundaryViolations(new Map([[wiring, [edge("src/objects/agent/memory/index.ts")]], [loop, [edge("src/objects/agent/runs/model-steps.ts")]]]))).toEqual([]);
  });
});
