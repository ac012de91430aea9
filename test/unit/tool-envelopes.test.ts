import { describe, expect, it } from "vitest";
import { canonicalHash } from "../../src/core/ids/hash";
import {
  actionEnvelopeSchema,
  actionTypeForTool,
  buildActionEnvelope,
  toolFailure,
  toolResultEnvelopeSchema,
  toolSuccess,
  verifyActionEnvelope,
} from "../../src/core/tools/tool-envelopes";

const runKey = "f".repeat(64);
const move = buildActionEnvelope({
  tool: { name: "move_checklist_items", version: 1, riskLevel: "high" },
  args: { itemIds: ["i2", "i1"], fromChecklistId: "a", toChecklistId: "b", preserveCheckedState: true, previewOnly: false },
  allowedCategoryIds: ["work", "gym", "work"],
  targetRefs: [{ type: "checklist", id: "b" }, { type: "checklist", id: "a" }, { type: "checklist", id: "b" }],
  runKey,
});

describe("action envelope", () => {
  it("carries the seed 000 §4.3.1 fields with normalized scope and targets", () => {
    expect(actionEnvelopeSchema.parse(move)).toEqual(move);
    expect(move).toMatchObject({
      actionType: "tool_call",
      toolName: "move_checklist_items",
      toolVersion: 1,
      argumentsHash: canonicalHash(move.args),
      scopeSnapshot: ["gym", "work"],
      targetRefs: [{ type: "checklist", id: "a" }, { type: "checklist", id: "b" }],
      riskLevel: "high",
      previewOnly: false,
    });
    expect(verifyActionEnvelope(move)).toEqual({ ok: true });
  });

  it("takes previewOnly from the arguments, so a preview and its apply are different operations", () => {
    const preview = buildActionEnvelope({
      tool: { name: "move_checklist_items", version: 1, riskLevel: "high" },
      args: { ...move.args, previewOnly: true },
      allowedCategoryIds: move.scopeSnapshot,
      targetRefs: move.targetRefs,
      runKey,
    });
    expect(preview.previewOnly).toBe(true);
    expect(preview.operationId).not.toBe(move.operationId);
  });

  it("maps ask_user and sleep to their seed action types", () => {
    expect(actionTypeForTool("ask_user")).toBe("ask_user");
    expect(actionTypeForTool("sleep")).toBe("lifecycle_transition");
    expect(actionTypeForTool("create_task")).toBe("tool_call");
  });

  it("rejects unknown fields and malformed ids", () => {
    expect(actionEnvelopeSchema.safeParse({ ...move, extra: 1 }).success).toBe(false);
    expect(actionEnvelopeSchema.safeParse({ ...move, operationId: "not-a-hash" }).success).toBe(false);
    expect(actionEnvelopeSchema.safeParse({ ...move, targetRefs: [{ type: "Task", id: "x" }] }).success).toBe(false);
  });
});

describe("toolResult envelope", () => {
  it("a success links affected entities and lists the changed ones, sorted and unique", () => {
    const result = toolSuccess(move, {
      actionRefId: "msg-1",
      output: { movedItems: [] },
      links: [
        { relation: "tool_effect", target: { type: "checklist_item", id: "i2" }, effect: "updated" },
        { relation: "tool_effect", target: { type: "checklist_item", id: "i1" }, effect: "updated" },
        { relation: "tool_effect", target: { type: "checklist", id: "a" }, effect: "read" },
      ],
      changedTokens: ["semanticKey|-|CHECKLIST", "entityId|-|i1", "semanticKey|-|CHECKLIST"],
    });
    expect(toolResultEnvelopeSchema.parse(result)).toEqual(result);
    expect(result).toMatchObject({ ok: true, status: "success", preview: false, operationId: move.operationId, toolName: "move_checklist_items" });
    expect(result.changedEntityIds).toEqual(["checklist_item:i1", "checklist_item:i2"]);
    expect(result.changedTokens).toEqual(["entityId|-|i1", "semanticKey|-|CHECKLIST"]);
  });

  it("a preview reports no changes", () => {
    const result = toolSuccess(
      { ...move, previewOnly: true },
      { actionRefId: "msg-1", output: {}, links: [{ relation: "tool_effect", target: { type: "checklist_item", id: "i1" }, effect: "updated" }], changedTokens: ["x"] },
    );
    expect(result).toMatchObject({ preview: true, changedEntityIds: [], changedTokens: [] });
  });

  it("a partial success says so", () => {
    expect(toolSuccess(move, { actionRefId: "m", output: null, partial: true }).status).toBe("partial");
  });

  it("a failure is data: ok false, code, message, retryable", () => {
    const result = toolFailure(move, { actionRefId: "msg-1", code: "out_of_scope", message: "checklist b is outside the agent's categories", retryable: false });
    expect(toolResultEnvelopeSchema.parse(result)).toEqual(result);
    expect(result).toEqual({
      envelopeVersion: 1,
      actionRefId: "msg-1",
      toolName: "move_checklist_items",
      toolVersion: 1,
      operationId: move.operationId,
      ok: false,
      status: "error",
      code: "out_of_scope",
      message: "checklist b is outside the agent's categories",
      retryable: false,
    });
    expect(toolResultEnvelopeSchema.safeParse({ ...result, code: "Out Of Scope" }).success).toBe(false);
    expect(toolResultEnvelopeSchema.safeParse({ ...result, ok: true }).success).toBe(false);
  });
});
