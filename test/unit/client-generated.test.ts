import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { VigilOperations } from "../../src/client/api.generated";
import type { RequestOptions } from "../../src/client/types";

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
    // One typed method per operation; the generic request reads its OPERATIONS row (path parameters, body, query, raw).
    expect(text).toContain("postAgentsSessionsClose(agentId: string, sid: string, options?: RequestOptions): Promise<{ closed: boolean }>;");
    expect(text).toContain('  postAgentsSessionsClose: { method: "POST", path: "/v1/agents/{id}/sessions/{sid}/close" },');
    // A non-JSON answer is handed back unread.
    expect(text).toContain("listThings(query?: { limit?: number }, options?: RequestOptions): Promise<Response>;");
    expect(text).toContain('  listThings: { method: "GET", path: "/v1/things", query: true, raw: true },');
  });

  it("sends every operation through one request function, with its arguments in the OPERATIONS row's order", async () => {
    const sent: unknown[][] = [];
    class Recorder extends VigilOperations {
      protected request<T>(method: string, path: string, body: unknown, options: RequestOptions | undefined): Promise<T> {
        sent.push([method, path, body, options]);
        return Promise.resolve(undefined as T);
      }
      protected requestRaw(method: string, path: string, body: unknown, options: RequestOptions | undefined): Promise<Response> {
        sent.push(["raw", method, path, body, options]);
        return Promise.resolve(new Response("ok"));
      }
    }
    const client = new Recorder();
    const options = { idempotencyKey: "k" };
    await client.setMemorySlot("ag 1", "a/b", undefined, options);
    await client.deleteJournalTask("t1", { version: 3 });
    await client.listJournalTasks({ limit: 2, categoryId: undefined });
    await client.updateJournalTask("t1", { version: 1, title: "x" });
    await client.getMetrics();
    expect(sent).toEqual([
      ["PUT", "/v1/agents/ag%201/memory/slots/a%2Fb", {}, options],
      ["DELETE", "/v1/journal/tasks/t1?version=3", undefined, undefined],
      ["GET", "/v1/journal/tasks?limit=2", undefined, undefined],
      ["PATCH", "/v1/journal/tasks/t1", { version: 1, title: "x" }, undefined],
      ["raw", "GET", "/v1/metrics", undefined, undefined],
    ]);
    // Methods sit on the prototype like class methods: not enumerable, one per operation.
    expect(Object.keys(client)).toEqual([]);
    expect(typeof VigilOperations.prototype.listJournalTasks).toBe("function");
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

  it("declares once an inline object shape that several schemas repeat, and a registered schema zod inlined by its name", async () => {
    const { renderClientModule } = await generator();
    const limits = { type: "object", properties: { tokens: { type: "integer" }, note: { type: "string", description: "why" } }, additionalProperties: false };
    const token = { type: "object", properties: { value: { type: "string" } }, required: ["value"] };
    const { text } = renderClientModule({
      paths: {},
      components: {
        schemas: {
          Create: { type: "object", properties: { limits, tokens: { type: "array", items: token } } },
          Patch: { type: "object", properties: { limits: { ...limits, type: ["object", "null"] } } },
          Event: { type: "object", properties: { tokens: { type: "array", items: token, maxItems: 3 } } },
          Token: token,
        },
      },
    });
    expect(text).toContain("export type Create = { limits?: Limits; tokens?: Array<Token> };");
    expect(text).toContain("export type Patch = { limits?: Limits | null };");
    expect(text).toContain("export type Event = { tokens?: Array<Token> };");
    expect(text).toContain("export type Token = { value: string };");
    expect(text).toContain("export type Limits = {\n  tokens?: number;\n  /** why */\n  note?: string;\n};");
  });
});
