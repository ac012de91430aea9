#!/usr/bin/env node
// The Worker must stay deployable: Cloudflare caps a Worker's compressed size, and a bundle that
// creeps towards the cap is a cold-start cost on every isolate. This builds exactly what
// `wrangler deploy` would upload (dry run, minified, offline) and fails when its gzip size passes the budget.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BUDGET_BYTES = 1024 * 1024; // gzip, minified
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

const outdir = mkdtempSync(join(tmpdir(), "vigil-bundle-"));
try {
  const result = spawnSync(process.execPath, [WRANGLER, "deploy", "--dry-run", "--minify", "--outdir", outdir], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr);
    console.error("✘ wrangler deploy --dry-run failed");
    process.exit(1);
  }
  const files = listFiles(outdir).filter((file) => /\.(m?js|wasm)$/.test(file));
  const raw = files.reduce((sum, file) => sum + statSync(file).size, 0);
  const gzip = files.reduce((sum, file) => sum + gzipSync(readFileSync(file), { level: 9 }).length, 0);
  const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`;
  const line = `bundle: ${kib(raw)} minified, ${kib(gzip)} gzip (budget ${kib(BUDGET_BYTES)} gzip)`;
  if (gzip > BUDGET_BYTES) {
    console.error(`✘ ${line}`);
    process.exit(1);
  }
  console.log(`✓ ${line}`);
} finally {
  rmSync(outdir, { recursive: true, force: true });
}

function listFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}
