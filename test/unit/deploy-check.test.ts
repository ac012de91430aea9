import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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

  it("refuses the bench and test seam switches from the environment, a secrets file or wrangler.toml", () => {
    expect(check({ ...GOOD, VIGIL_BENCH: "enabled" }).out).toMatch(/VIGIL_BENCH=enabled must not be deployed \(the environment\)/);
    expect(check({ ...GOOD, VIGIL_FAULTS: "on" }).code).toBe(1);
    const dir = mkdtempSync(join(tmpdir(), "vigil-deploy-check-"));
    const secrets = join(dir, "prod.vars");
    writeFileSync(secrets, `VIGIL_MASTER_KEY=${GOOD.VIGIL_MASTER_KEY}\nVIGIL_ADMIN_TOKEN=${GOOD.VIGIL_ADMIN_TOKEN}\nVIGIL_BENCH=enabled\n`);
    const fromFile = check({}, ["--secrets-file", secrets]);
    expect(fromFile.code).toBe(1);
    expect(fromFile.out).toMatch(/VIGIL_BENCH=enabled must not be deployed \(the secrets file/);
    const real = readFileSync(join(import.meta.dirname, "..", "..", "wrangler.toml"), "utf8");
    for (const [line, refusal] of [
      ['[vars]\nVIGIL_BENCH = "enabled"', /VIGIL_BENCH=enabled must not be deployed \(wrangler.toml\)/],
      ['[env.staging.vars]\nVIGIL_FAULTS = "enabled"', /VIGIL_FAULTS=enabled must not be deployed \(wrangler.toml\)/],
      ["[env.staging]\nvars = { VIGIL_MODE = 'local' }", /VIGIL_MODE=local must not be deployed \(wrangler.toml\)/],
    ] as const) {
      const config = join(dir, "wrangler.toml");
      writeFileSync(config, `${real}\n${line}\n`);
      const run = check(GOOD, ["--config", config]);
      expect(run.code, line).toBe(1);
      expect(run.out, line).toMatch(refusal);
    }
    const commented = join(dir, "commented.toml");
    writeFileSync(commented, `${real}\n# VIGIL_BENCH = "enabled" only for npm run bench\n`);
    expect(check(GOOD, ["--config", commented]).code).toBe(0);
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
