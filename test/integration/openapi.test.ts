import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/http/routes";
import { api } from "./helpers";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
/** Public, infallible endpoints with nothing to refuse: no problem response to document. */
const NO_PROBLEMS = new Set(["get /healthz", "get /docs"]);

describe("OpenAPI document", () => {
  it("documents every registered route, publicly", async () => {
    const res = await api("GET", "/v1/openapi.json");
    expect(res.status).toBe(200);
    const paths = res.body.paths as Record<string, Record<string, unknown>>;
    const routes = buildApp()
      .routes.filter((route) => route.method !== "ALL" && !route.path.startsWith("/__bench/") && !route.path.startsWith("/__debug/") && route.path !== "/v1/openapi.json")
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
    expect(routes.length).toBeGreaterThan(20);
    const missing = [...new Set(routes)].filter((entry) => {
      const [method, path] = entry.split(" ");
      return !paths[path!]?.[method!];
    });
    expect(missing).toEqual([]);
  });

  it("gives every operation at least one problem+json 4xx response", async () => {
    const { body } = await api("GET", "/v1/openapi.json");
    const lacking: string[] = [];
    for (const [path, item] of Object.entries(body.paths as Record<string, Record<string, any>>)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op || NO_PROBLEMS.has(`${method} ${path}`)) continue;
        const ok = Object.entries(op.responses ?? {}).some(([status, response]: [string, any]) => /^4\d\d$/.test(status) && response.content?.["application/problem+json"]);
        if (!ok) lacking.push(`${method} ${path}`);
      }
    }
    expect(lacking).toEqual([]);
  });
});
