import { describe, expect, it } from "vitest";
import { toMessage } from "../../src/objects/agent/rows/records";

const base = { seq: 2, id: "m2", threadId: "ag_1:session:default", kind: "assistant", text: "echo: hi", content: null, prevMessageId: "m1", runKey: "r1", authority: null, createdAt: "2026-11-26T00:00:00.000Z" };

describe("a message row's prevMessageId", () => {
  it("reads the same whether the metadata JSON repeats it (rows before 0011) or only the column holds it", () => {
    const before = toMessage("ag_1", { ...base, metadata: { step: 0, final: true, prevMessageId: "m1" } });
    const after = toMessage("ag_1", { ...base, metadata: { step: 0, final: true } });
    expect(JSON.stringify(after)).toBe(JSON.stringify(before));
    expect(Object.keys(after.metadata)).toEqual(["step", "final", "prevMessageId", "runKey"]);
  });

  it("answers null for a thread's first message", () => {
    expect(toMessage("ag_1", { ...base, prevMessageId: null, metadata: {} }).metadata).toEqual({ prevMessageId: null, runKey: "r1" });
  });
});
