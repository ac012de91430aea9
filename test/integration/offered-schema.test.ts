import { describe, expect, it } from "vitest";
import { toolSetFor } from "../../src/objects/agent/runs/model-steps";
import { builtinTools, inputJsonSchema } from "../../src/tools/registry";

const schemaOf = async (tool: unknown): Promise<Record<string, unknown>> => (await (tool as { inputSchema: { jsonSchema: unknown } }).inputSchema.jsonSchema) as Record<string, unknown>;

describe("the tools offered to the model", () => {
  it("offer each registry tool's JSON Schema as converted, a fresh copy per step that no step can change for the next", async () => {
    const tools = builtinTools.slice(0, 5);
    expect(tools.length).toBeGreaterThan(0);
    const first = toolSetFor(tools);
    for (const definition of tools) {
      const offered = await schemaOf(first[definition.name]);
      expect(offered).toEqual(inputJsonSchema(definition));
      offered.type = "changed by a step";
      (offered as { extra?: unknown }).extra = [1];
    }
    const second = toolSetFor(tools);
    for (const definition of tools) expect(await schemaOf(second[definition.name])).toEqual(inputJsonSchema(definition));
  });
});
