import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { PUBLIC_ROUTES } from "../../src/routes/openapi-contract";
import { EMPTY_POLICY } from "../../src/schema/admin/policy";

const ROOT = join(__dirname, "..", "..");
const METHODS = ["get", "post", "put", "patch", "delete"] as const;
type Operation = { security?: unknown[]; responses: Record<string, unknown> };
let document: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> }; servers?: unknown[] };

function operations(): Array<[string, Operation]> {
  return Object.entries(document.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => [`${m.toUpperCase()} ${path}`, item[m]!] as [string, Operation]));
}

beforeAll(async () => {
  const { loadOpenApiDocument } = (await import(pathToFileURL(join(ROOT, "scripts", "gen-client.mjs")).href)) as { loadOpenApiDocument(): Promise<typeof document> };
  document = await loadOpenApiDocument();
}, 120_000);

describe("the OpenAPI document is a contract", () => {
  it("passes @redocly/cli lint (recommended rules) with no errors", () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-openapi-"));
    try {
      const file = join(dir, "openapi.json");
      writeFileSync(file, JSON.stringify(document));
      const lint = spawnSync(process.execPath, [join(ROOT, "node_modules", "@redocly", "cli", "bin", "cli.js"), "lint", file, "--format=json"], { encoding: "utf8", env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } });
      const report = JSON.parse(lint.stdout) as { problems: Array<{ ruleId: string; severity: string; message: string }> };
      expect(report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
      expect(lint.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("sets servers, and exactly the public routes declare security: []", () => {
    expect(document.servers).toEqual([{ url: "/", description: "This deployment" }]);
    const open = operations().filter(([, op]) => Array.isArray(op.security) && op.security.length === 0).map(([key]) => key);
    expect(open.sort()).toEqual([...PUBLIC_ROUTES].sort());
    expect(operations().filter(([, op]) => op.security === undefined).map(([key]) => key)).toEqual([]);
  });

  it("lists 401 and 429 (problem+json) on every operation that takes a credential", () => {
    const lacking = operations()
      .filter(([, op]) => (op.security?.length ?? 0) > 0)
      .flatMap(([key, op]) => ["401", "429"].filter((status) => !(op.responses[status] as any)?.content?.["application/problem+json"]).map((status) => `${key} ${status}`));
    expect(lacking).toEqual([]);
  });

  it("GET /v1/policy's schema accepts the default policy and PUT's accepts what GET returns", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: "vigil", components: document.components });
    const policy = ajv.compile({ $ref: "vigil#/components/schemas/Policy" });
    expect(policy(EMPTY_POLICY), JSON.stringify(policy.errors)).toBe(true);
    expect(policy({ ...EMPTY_POLICY, surprise: 1 })).toBe(false);
    const write = ajv.compile({ $ref: "vigil#/components/schemas/PolicyWrite" });
    expect(write(EMPTY_POLICY), JSON.stringify(write.errors)).toBe(true);
  });
});
