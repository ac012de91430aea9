import { readFileSync } from "node:fs";
import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { WAKE_REASONS } from "../../src/core/ids/run-keys";
import { RISK_LEVELS } from "../../src/core/tools/tool-envelopes";
import { contractSpecDiff } from "../../src/tools/contract-spec";
import { builtinTools, CAPABILITIES, IDEMPOTENCY_STRATEGIES, SCOPE_RULES, SIDE_EFFECT_KINDS, type ToolDefinition } from "../../src/tools/registry";

const root = new URL("../../tools/", import.meta.url);
const schema = JSON.parse(readFileSync(new URL("contract-spec.schema.json", root), "utf8")) as Record<string, any>;
const specText = readFileSync(new URL("contract-spec.yaml", root), "utf8");
const loadSpec = () => parse(specText) as { specVersion: number; tools: Record<string, Record<string, any>> };
const tools = builtinTools as readonly ToolDefinition[];

const validator = new Validator(schema, "2020-12", false);

function validate(document: unknown): string[] {
  const result = validator.validate(document);
  return result.errors.map((error) => `${error.instanceLocation} ${error.keyword}: ${error.error}`);
}

describe("tools/contract-spec.yaml against its JSON Schema", () => {
  it("is valid", () => {
    expect(validate(loadSpec())).toEqual([]);
  });

  it("rejects what the schema forbids", () => {
    const cases: Array<[string, (tool: Record<string, any>) => void]> = [
      ["an unknown capability", (tool) => (tool["capabilitiesRequired"] = ["taskWrite", "rootAccess"])],
      ["an unknown wake reason", (tool) => (tool["allowedWakeReasons"] = ["cron"])],
      ["a missing field", (tool) => delete tool["riskLevel"]],
      ["an extra field", (tool) => (tool["handler"] = "x")],
      ["a high-risk tool without preview", (tool) => (tool["supportsPreview"] = false)],
      ["duplicated scope rules", (tool) => (tool["scopeRules"] = ["both_ends", "both_ends"])],
      ["'none' with another scope rule", (tool) => (tool["scopeRules"] = ["none", "both_ends"])],
      ["a read_only write", (tool) => (tool["idempotencyStrategy"] = "read_only")],
      ["a bad schema ref", (tool) => (tool["inputSchemaRef"] = "move_checklist_items.json")],
      ["a version 0", (tool) => (tool["version"] = 0)],
    ];
    for (const [label, mutate] of cases) {
      const spec = loadSpec();
      mutate(spec.tools["move_checklist_items"] as Record<string, any>);
      expect(validate(spec), label).not.toEqual([]);
    }
  });

  it("mirrors the TypeScript enums exactly", () => {
    const defs = schema["$defs"] as Record<string, { enum?: string[] }>;
    expect(defs["capability"]?.enum).toEqual([...CAPABILITIES]);
    expect(defs["wakeReason"]?.enum).toEqual([...WAKE_REASONS]);
    expect(defs["scopeRule"]?.enum).toEqual([...SCOPE_RULES]);
    expect(defs["sideEffectKind"]?.enum).toEqual([...SIDE_EFFECT_KINDS]);
    expect(defs["idempotencyStrategy"]?.enum).toEqual([...IDEMPOTENCY_STRATEGIES]);
    expect(defs["riskLevel"]?.enum).toEqual([...RISK_LEVELS]);
  });
});

describe("registry ⇔ contract spec parity", () => {
  it("holds one-to-one, field by field", () => {
    expect(contractSpecDiff(tools, loadSpec().tools)).toEqual([]);
  });

  it("fails on a difference in any compared field", () => {
    const mutations: Array<[string, (tool: Record<string, any>) => void]> = [
      ["version", (tool) => (tool["version"] = 2)],
      ["capabilitiesRequired", (tool) => (tool["capabilitiesRequired"] = ["taskWrite"])],
      ["allowedWakeReasons", (tool) => (tool["allowedWakeReasons"] = [...WAKE_REASONS])],
      ["idempotencyStrategy", (tool) => (tool["idempotencyStrategy"] = "natural_key")],
      ["scopeRules", (tool) => (tool["scopeRules"] = ["target_category"])],
      ["sideEffects", (tool) => (tool["sideEffects"] = { ...tool["sideEffects"], semanticKeys: ["CHECKLIST", "TASK"] })],
      ["riskLevel", (tool) => (tool["riskLevel"] = "medium")],
      ["supportsPreview", (tool) => (tool["supportsPreview"] = false)],
      ["dataMinimizationPolicyRef", (tool) => (tool["dataMinimizationPolicyRef"] = "dm.journal.tasks.v1")],
      ["inputFields", (tool) => (tool["inputFields"] = { ...tool["inputFields"], optional: ["previewOnly"] })],
      ["inputSchemaRef", (tool) => (tool["inputSchemaRef"] = "registry:move_checklist_items@2#input")],
    ];
    for (const [field, mutate] of mutations) {
      const spec = loadSpec();
      mutate(spec.tools["move_checklist_items"] as Record<string, any>);
      const diff = contractSpecDiff(tools, spec.tools);
      expect(diff, field).toHaveLength(1);
      expect(diff[0], field).toMatch(new RegExp(`^move_checklist_items\\.${field}: registry .* ≠ spec `));
    }
  });

  it("fails when a tool is missing on either side or declared twice", () => {
    const spec = loadSpec();
    delete spec.tools["sleep"];
    spec.tools["teleport"] = { ...spec.tools["ask_user"] };
    expect(contractSpecDiff(tools, spec.tools)).toEqual(["teleport: in the spec but not in the registry", "sleep: in the registry but not in the spec"]);
    expect(contractSpecDiff([...tools, tools[0] as ToolDefinition], loadSpec().tools)).toEqual([`${tools[0]?.name}: declared more than once in the registry`]);
  });

  it("treats lists as sets: order does not matter", () => {
    const spec = loadSpec();
    for (const tool of Object.values(spec.tools)) {
      tool["allowedWakeReasons"] = [...tool["allowedWakeReasons"]].reverse();
      tool["capabilitiesRequired"] = [...tool["capabilitiesRequired"]].reverse();
      tool["inputFields"] = { required: [...tool["inputFields"].required].reverse(), optional: [...tool["inputFields"].optional].reverse() };
    }
    expect(contractSpecDiff(tools, spec.tools)).toEqual([]);
  });
});
