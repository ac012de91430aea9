import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");

interface Generator {
  renderClientModule(document: unknown): { text: string; derived: Array<{ name: string }> };
  tsType(schema: unknown, indent?: string): string;
  derivedName(method: string, path: string): string;
}
const generator = (): Promise<Generator> => import(pathToFileURL(join(ROOT, "scripts", "gen-client.mjs")).href) as Promise<Generator>;

const problem = { 400: { description: "bad", content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } } };

describe("the generated client operations (src/client/api.generated.ts)", () => {
  it("are what scripts/gen-client.mjs generates from the routes today (run npm run gen:client if not)", () => {
    const check = spawnSync(process.execPath, ["scripts/gen-client.mjs", "--check"], { cwd: ROOT, encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  }, 120_000);

  it("gives an operation without an operationId a method named from its method and path", async () => {
    const { renderClientModule, derivedName } = await generator();
    expect(derivedName("post", "/v1/agents/{id}/sessions/{sid}/close")).toBe("postAgentsSessionsClose");
    const document = {
      paths: {
        "/v1/agents/{id}/sessions/{sid}/close": {
          post: { responses: { 200: { description: "ok", content: { "application/json": { schema: { type: "object", properties: { closed: { type: "boolean" } }, required: ["closed"] } } } }, ...problem } },
        },
        "/v1/things": { get: { operationId: "listThings", parameters: [{ name: "limit", in: "query", required: false, schema: { type: "integer" } }], responses: { 200: { description: "ok", content: { "text/plain": { schema: { type: "string" } } } } } } },
      },
      components: { schemas: { Problem: { type: "object", properties: { code: { type: "string" } }, required: ["code"] } } },
    };
    const { text, derived } = renderClientModule(document);
    expect(derived.map((entry) => entry.name)).toEqual(["postAgentsSessionsClose"]);
    expect(text).toContain("postAgentsSessionsClose(agentId: string, sid: string, options?: RequestOptions): Promise<{\n    closed: boolean;\n  }>");
    expect(text).toContain('this.request<{\n    closed: boolean;\n  }>("POST", `/v1/agents/${encodeURIComponent(agentId)}/sessions/${encodeURIComponent(sid)}/close`, undefined, options)');
    // A non-JSON answer is handed back unread.
    expect(text).toContain('listThings(query: {\n    limit?: number;\n  } = {}, options?: RequestOptions): Promise<Response>');
    expect(text).toContain('  postAgentsSessionsClose: { method: "POST", path: "/v1/agents/{id}/sessions/{sid}/close" },');
  });

  it("refuses two operations that would get one method name", async () => {
    const { renderClientModule } = await generator();
    const op = { operationId: "same", responses: { 204: { description: "ok" } } };
    expect(() => renderClientModule({ paths: { "/a": { get: op }, "/b": { get: op } } })).toThrow(/two operations are named same/);
  });

  it("turns the JSON Schemas zod-to-openapi emits into TypeScript types", async () => {
    const { tsType } = await generator();
    expect(tsType({ type: ["string", "null"], enum: ["a", "b"] })).toBe('"a" | "b" | null');
    expect(tsType({ type: ["integer", "null"] })).toBe("number | null");
    expect(tsType({ type: "array", items: { $ref: "#/components/schemas/Agent" } })).toBe("Array<Agent>");
    expect(tsType({ type: "object", additionalProperties: { type: "string" } })).toBe("Record<string, string>");
    expect(tsType({ type: "object", additionalProperties: {} })).toBe("Record<string, unknown>");
    expect(tsType({ anyOf: [{ type: "string" }, { type: "number" }] })).toBe("string | number");
    expect(tsType({})).toBe("unknown");
    expect(tsType({ type: "object", properties: { "a-b": { type: "boolean", description: "why" }, c: { const: 1 } }, required: ["c"] })).toBe('{\n  /** why */\n  "a-b"?: boolean;\n  c: 1;\n}');
  });
});
