import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = join(import.meta.dirname, "..", "..", "scripts", "deploy-check.mjs");
const GOOD = { VIGIL_MASTER_KEY: "k".repeat(44), VIGIL_ADMIN_TOKEN: "a".repeat(32) };

function check(env: Record<string, string>, args: string[] = []) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("VIGIL_")));
  const run = spawnSync(process.execPath, [SCRIPT, ...args], { env: { ...clean, ...env }, encoding: "utf8" });
  return { code: run.status, out: run.stdout + run.stderr };
}

describe("npm run deploy:check", () => {
  it("refuses to deploy without VIGIL_MASTER_KEY and VIGIL_ADMIN_TOKEN, naming each", () => {
    const none = check({});
    expect(none.code).toBe(1);
    expect(none.out).toMatch(/VIGIL_MASTER_KEY is not set/);
    expect(none.out).toMatch(/VIGIL_ADMIN_TOKEN is not set/);
  });

  it("refuses a short master key, local mode and armed test seams", () => {
    const weak = check({ ...GOOD, VIGIL_MASTER_KEY: "short", VIGIL_MODE: "local", VIGIL_FAULTS: "enabled" });
    expect(weak.code).toBe(1);
    expect(weak.out).toMatch(/shorter than 32 characters/);
    expect(weak.out).toMatch(/VIGIL_MODE=local must not be deployed/);
    expect(weak.out).toMatch(/VIGIL_FAULTS=enabled must not be deployed/);
  });

  it("passes with good secrets from the environment or from a secrets file", () => {
    expect(check(GOOD).code).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "vigil-deploy-check-"));
    const file = join(dir, "prod.vars");
    writeFileSync(file, `VIGIL_MASTER_KEY=${GOOD.VIGIL_MASTER_KEY}\nVIGIL_ADMIN_TOKEN="${GOOD.VIGIL_ADMIN_TOKEN}"\n`);
    expect(check({}, ["--secrets-file", file])).toMatchObject({ code: 0 });
    expect(check({}, ["--secrets-file", join(dir, "missing.vars")]).code).toBe(1);
  });
});
