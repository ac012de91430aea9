import { describe, expect, it } from "vitest";
import { modelVisibleSlots, withheldFoundIn, withheldNeedles, type ExtensionSlotRegistry } from "../../src/core/memory/extension-slots";
import { emptySlots, renderSlots } from "../../src/core/memory/slots";

const registry: ExtensionSlotRegistry = {
  "vault.apiKey": { schema: {}, maxChars: 100 },
  "gym.weeklyTarget": { schema: {}, maxChars: 100, modelVisible: true },
};
const slots = { ...emptySlots(), extension: { "vault.apiKey": 'sk-"quoted"-secret', "gym.weeklyTarget": "three-runs", "other.flag": { deep: ["unregistered-value"] } } };

describe("extension slots and NEED_TO_KNOW", () => {
  it("the model's projection keeps only keys registered modelVisible", () => {
    expect(modelVisibleSlots(slots, registry).extension).toEqual({ "gym.weeklyTarget": "three-runs" });
    expect(renderSlots(modelVisibleSlots(slots, {}))).toBe("");
  });

  it("finds a withheld value in the bytes raw or JSON-escaped once or twice, never a visible one", () => {
    const needles = withheldNeedles(slots, registry);
    expect(withheldFoundIn(JSON.stringify({ content: "three-runs" }), needles)).toEqual([]);
    expect(withheldFoundIn(JSON.stringify({ content: 'sk-"quoted"-secret' }), needles)).toEqual(["vault.apiKey"]);
    expect(withheldFoundIn(JSON.stringify({ content: JSON.stringify({ v: 'sk-"quoted"-secret' }) }), needles)).toEqual(["vault.apiKey"]);
    expect(withheldFoundIn(JSON.stringify({ content: "x unregistered-value y" }), needles)).toEqual(["other.flag"]);
  });
});
