import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { MCP_TOOL_CONTRACT, mcpCacheEntries } from "../../src/core/tools/mcp-tools";
import { ANY_WAKE } from "../../src/tools/registry";

const spec = parse(readFileSync(new URL("../../tools/contract-spec.yaml", import.meta.url), "utf8")) as { registeredTools: { mcp: Record<string, any> } };

describe("tools/contract-spec.yaml registeredTools.mcp", () => {
  it("says what the code does, field by field", () => {
    const mcp = spec.registeredTools.mcp;
    expect(mcp.registration).toBe("POST /v1/mcp-servers");
    for (const field of ["namePattern", "supportsPreview", "scopeRules", "dataMinimizationPolicyRef", "mutating", "readOnly"] as const) {
      expect(mcp[field], field).toEqual(MCP_TOOL_CONTRACT[field]);
    }
    expect([...mcp.allowedWakeReasons].sort()).toEqual([...ANY_WAKE].sort());
    expect(mcp.mutatingWhen).toBe("annotations.readOnlyHint is not true");
  });

  it("every name the code offers matches the declared pattern", () => {
    const { tools } = mcpCacheEntries("github", [{ name: "create_issue", inputSchema: { type: "object" } }, { name: "Search.Repos-v2", inputSchema: { type: "object" } }], null);
    for (const tool of tools) expect(tool.name).toMatch(new RegExp(spec.registeredTools.mcp.namePattern));
    expect(tools.map((tool) => tool.mutating)).toEqual([true, true]);
  });
});
