import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MCP_MODEL_NAME_MAX, mcpCacheEntries, mcpModelName } from "../../src/core/tools/mcp-tools";
import { declaredArguments, guardMcpRequest, mcpRequestAllowlist } from "../../src/core/egress/need-to-know-mcp";

const schema = { type: "object", properties: { word: { type: "string" }, filters: { type: "object" } }, required: ["word"] };

describe("MCP tool names and cache entries", () => {
  it("names a remote tool mcp_<server>_<tool>, folding characters a model function name cannot carry", () => {
    expect(mcpModelName("github", "create_issue")).toBe("mcp_github_create_issue");
    expect(mcpModelName("linear", "issues.Create-v2")).toBe("mcp_linear_issues_create_v2");
  });

  it("every offered name is a valid model function name", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9]{0,23}$/), fc.string({ minLength: 1, maxLength: 80 }), (server, tool) => {
        const { tools } = mcpCacheEntries(server, [{ name: tool, inputSchema: { type: "object" } }], null);
        for (const entry of tools) expect(entry.name).toMatch(new RegExp(`^mcp_[a-z0-9_]{1,${MCP_MODEL_NAME_MAX - 4}}$`));
      }),
    );
  });

  it("applies the filter, leaves out clashing and overlong names, and treats only readOnlyHint: true as a read", () => {
    const listed = [
      { name: "lookup", inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: {} }, annotations: { readOnlyHint: true } },
      { name: "write", description: "Writes", inputSchema: { type: "object" } },
      { name: "destroy", inputSchema: { type: "object" }, annotations: { readOnlyHint: false, destructiveHint: true } },
      { name: "a-b", inputSchema: { type: "object" } },
      { name: "a.b", inputSchema: { type: "object" } },
      { name: "x".repeat(70), inputSchema: { type: "object" } },
      { name: "filtered", inputSchema: { type: "object" } },
    ];
    const filter = listed.map((tool) => tool.name).filter((name) => name !== "filtered");
    const { tools, skipped } = mcpCacheEntries("srv", listed, filter);
    expect(tools.map((tool) => [tool.name, tool.mutating])).toEqual([
      ["mcp_srv_lookup", false],
      ["mcp_srv_write", true],
      ["mcp_srv_destroy", true],
    ]);
    expect(skipped).toEqual(["a-b", "a.b", "x".repeat(70)]);
    // The dialect marker is dropped (the model's schema check needs no $schema); the root stays an object.
    expect(tools[0]!.inputSchema).toEqual({ type: "object", properties: {} });
    expect(tools[1]!.description).toBe("Writes");
    expect(tools[2]!.description).toBe("destroy");
  });
});

describe("NEED_TO_KNOW on MCP requests", () => {
  const declaredFor = (name: string) => (name === "lookup" ? declaredArguments(schema) : null);

  it("lets a tools/call carry the declared arguments, whole, and nothing else", () => {
    const call = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "lookup", arguments: { word: "x", filters: { lang: "en", tags: ["a"] } } } };
    expect(guardMcpRequest(call, declaredFor)).toEqual({ ok: true });
    const leaky = { ...call, params: { ...call.params, arguments: { word: "x", email: "a@b.c" } } };
    expect(guardMcpRequest(leaky, declaredFor)).toEqual({ ok: false, code: "overshared_payload_blocked", fields: ["params.arguments.email"] });
    const meta = { ...call, params: { ...call.params, _meta: { tenant: "t1" } } };
    expect(guardMcpRequest(meta, declaredFor)).toMatchObject({ ok: false, fields: ["params._meta.tenant"] });
  });

  it("blocks any argument of a tool the server did not list, and empty arguments pass", () => {
    expect(guardMcpRequest({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "other", arguments: { a: 1 } } }, declaredFor)).toMatchObject({ ok: false });
    expect(guardMcpRequest({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "other", arguments: {} } }, declaredFor)).toEqual({ ok: true });
  });

  it("admits the handshake and listing, and nothing extra on them; batches and unknown methods' params are blocked", () => {
    const init = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "vigil", version: "1.0.0" } } };
    expect(guardMcpRequest(init, declaredFor)).toEqual({ ok: true });
    expect(guardMcpRequest({ ...init, params: { ...init.params, clientInfo: { name: "vigil", version: "1", tenant: "t" } } }, declaredFor)).toMatchObject({ ok: false });
    expect(guardMcpRequest({ jsonrpc: "2.0", method: "notifications/initialized" }, declaredFor)).toEqual({ ok: true });
    expect(guardMcpRequest({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { cursor: "c" } }, declaredFor)).toEqual({ ok: true });
    expect(guardMcpRequest([init], declaredFor)).toMatchObject({ ok: false });
    expect(guardMcpRequest({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "file:///etc/passwd" } }, declaredFor)).toMatchObject({ ok: false });
    expect(mcpRequestAllowlist("sampling/createMessage", null)).toEqual(["jsonrpc", "id", "method"]);
  });
});
