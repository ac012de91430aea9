import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WIDGET_JS, WIDGET_VERSION } from "../../src/widget/bundle.generated";

const ROOT = join(__dirname, "..", "..");

describe("the chat widget bundle (src/widget/bundle.generated.ts)", () => {
  it("is what scripts/build-widget.mjs builds from src/widget/ today (run npm run build:widget if not)", () => {
    const check = spawnSync(process.execPath, ["scripts/build-widget.mjs", "--check"], { cwd: ROOT, encoding: "utf8" });
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  });

  it("is a self-contained browser script that defines <vigil-chat>", () => {
    expect(WIDGET_VERSION).toMatch(/^[0-9a-f]{20}$/);
    expect(WIDGET_JS).toContain('customElements.define("vigil-chat"');
    // Dependency-free: nothing left to resolve at load time.
    expect(WIDGET_JS).not.toMatch(/\bimport\s*\(|\brequire\s*\(|^\s*import\s/m);
  });
});
