// Starts and stops a private `wrangler dev` for the bench: own port, own inspector port, own
// persistence directory, own process group (so stopping it leaves no workerd behind).
//
// The worker is bundled once up front (`wrangler deploy --dry-run --outdir`, i.e. the bundle a
// deploy would upload) and served with `wrangler dev --no-bundle` from a temp dir holding a copy of
// wrangler.toml. wrangler then watches only that temp dir, so edits to src/ or wrangler.toml made
// while the bench runs cannot hot-reload the worker mid-measurement (a reload drops Durable Object
// state and open SSE streams).
import { spawn, execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);
const wranglerBin = (repoDir) => join(repoDir, "node_modules", "wrangler", "bin", "wrangler.js");
/**
 * wrangler ≥ 4.1xx runs a local Workers Observability collector beside the worker (a streaming tail worker fed a
 * span for every storage call, written to a SQLite trace store in the same workerd): ~22 ms of a 60 ms streaming
 * turn here, work the platform does outside the isolate. The bench measures our hot path without it unless
 * VIGIL_BENCH_LOCAL_OBSERVABILITY=1.
 */
export const localObservability = process.env.VIGIL_BENCH_LOCAL_OBSERVABILITY === "1";
const wranglerEnv = () => ({ ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0", CI: "1", X_LOCAL_OBSERVABILITY: localObservability ? "true" : "false" });

/** Bundles the worker into `workDir/bundle` and writes `workDir/wrangler.toml` pointing at it. */
async function snapshotWorker(repoDir, workDir) {
  const outdir = join(workDir, "bundle");
  try {
    await execFileAsync(process.execPath, [wranglerBin(repoDir), "deploy", "--dry-run", "--outdir", outdir], { cwd: repoDir, env: wranglerEnv(), maxBuffer: 16 * 2 ** 20 });
  } catch (err) {
    throw new Error(`bundling the worker failed (wrangler deploy --dry-run):\n${err.stdout ?? ""}${err.stderr ?? ""}`);
  }
  const toml = withoutBuildSection(readFileSync(join(repoDir, "wrangler.toml"), "utf8"))
    .split("\n")
    .map((line) => {
      if (/^\s*main\s*=/.test(line)) return `main = "bundle/worker.js"`;
      // The per-client budget is the Rate Limiting binding's: raised so the bench measures work, not refusals.
      if (/^\s*simple\s*=\s*\{\s*limit\s*=/.test(line)) return "simple = { limit = 1000000, period = 60 }";
      // keep any other relative directory (e.g. [assets] directory) pointing into the repo
      const dir = /^(\s*directory\s*=\s*)"([^"]+)"(.*)$/.exec(line);
      if (dir && !isAbsolute(dir[2])) return `${dir[1]}${JSON.stringify(resolve(repoDir, dir[2]))}${dir[3]}`;
      return line;
    })
    .join("\n");
  writeFileSync(join(workDir, "wrangler.toml"), toml);
}

/**
 * The `[build]` custom command (e.g. the widget build) already ran for `deploy --dry-run` in the repo;
 * in the temp dir its paths do not exist, and the snapshot must not rebuild anyway.
 */
function withoutBuildSection(toml) {
  const out = [];
  let skipping = false;
  for (const line of toml.split("\n")) {
    if (/^\s*\[/.test(line)) skipping = /^\s*\[build\]\s*$/.test(line);
    if (!skipping) out.push(line);
  }
  return out.join("\n");
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Process ids still in the process group `pgid` (empty once the whole tree is gone). */
function groupMembers(pgid) {
  try {
    const out = execFileSync("ps", ["-o", "pid=", "-g", String(pgid)], { encoding: "utf8" });
    return out.split("\n").map((s) => s.trim()).filter(Boolean).map(Number);
  } catch {
    return []; // ps exits 1 when nothing matches
  }
}

/** The workerd that runs the user worker (started with `--inspector-addr`) in the server's process group, or null. */
export function userWorkerPid(groupId) {
  const ps = execFileSync("ps", ["-o", "pid=,args=", "-g", String(groupId)], { encoding: "utf8" });
  return ps.split("\n").find((l) => l.includes("--inspector-addr"))?.trim().split(/\s+/)[0] ?? null;
}

/**
 * @param {{ repoDir: string, vars?: Record<string,string>, log?: (line: string) => void, startTimeoutMs?: number }} options
 */
export async function startWrangler({ repoDir, vars = {}, log = () => {}, startTimeoutMs = 90_000 }) {
  const port = await freePort();
  const inspectorPort = await freePort();
  const workDir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  const persistDir = join(workDir, "state");
  const bundleStarted = Date.now();
  try {
    await snapshotWorker(repoDir, workDir);
  } catch (err) {
    rmSync(workDir, { recursive: true, force: true });
    throw err;
  }
  const bundleMs = Date.now() - bundleStarted;
  const adminToken = `bench-admin-${randomBytes(12).toString("hex")}`;
  const masterKey = randomBytes(32).toString("base64");
  const allVars = { VIGIL_ADMIN_TOKEN: adminToken, VIGIL_MASTER_KEY: masterKey, ...vars };
  const args = [
    wranglerBin(repoDir), "dev",
    "--config", join(workDir, "wrangler.toml"),
    "--no-bundle",
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--inspector-port", String(inspectorPort),
    "--persist-to", persistDir,
    "--show-interactive-dev-session=false",
    "--log-level", "warn",
  ];
  // wrangler splits --var on the first ':' and keeps the rest (JSON values with ':' are safe).
  for (const [key, value] of Object.entries(allVars)) args.push("--var", `${key}:${value}`);

  const output = [];
  const child = spawn(process.execPath, args, {
    cwd: workDir,
    detached: true, // new process group: node wrangler → workerd are stopped together
    stdio: ["ignore", "pipe", "pipe"],
    env: wranglerEnv(),
  });
  const keep = (chunk) => {
    for (const line of chunk.toString().split("\n")) {
      if (!line.trim()) continue;
      output.push(line);
      if (output.length > 400) output.shift();
      log(line);
    }
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let exited = null;
  const exitPromise = new Promise((resolve) => child.on("exit", (code, signal) => { exited = { code, signal }; resolve(exited); }));

  const baseUrl = `http://127.0.0.1:${port}`;
  const server = {
    baseUrl, port, inspectorPort, workDir, persistDir, bundleMs, adminToken, pid: child.pid, output,
    async stop() {
      const pgid = child.pid;
      const signalGroup = (sig) => { try { process.kill(-pgid, sig); } catch { /* already gone */ } };
      signalGroup("SIGTERM");
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && groupMembers(pgid).length > 0) await sleep(100);
      if (groupMembers(pgid).length > 0) {
        signalGroup("SIGKILL");
        const hardDeadline = Date.now() + 5_000;
        while (Date.now() < hardDeadline && groupMembers(pgid).length > 0) await sleep(100);
      }
      if (!exited) await Promise.race([exitPromise, sleep(2_000)]);
      const left = groupMembers(pgid);
      rmSync(workDir, { recursive: true, force: true });
      return { orphans: left };
    },
  };

  const started = Date.now();
  for (;;) {
    if (exited) throw new Error(`wrangler dev exited before it was ready (${JSON.stringify(exited)}):\n${output.slice(-40).join("\n")}`);
    if (Date.now() - started > startTimeoutMs) {
      await server.stop();
      throw new Error(`wrangler dev not healthy after ${startTimeoutMs} ms:\n${output.slice(-40).join("\n")}`);
    }
    try {
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) {
        await res.arrayBuffer();
        server.startupMs = Date.now() - started;
        return server;
      }
      await res.arrayBuffer();
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
}

/** The vars every bench run serves with: the bench seams on, and rate limits no bench reaches. */
export const BENCH_VARS = {
  VIGIL_BENCH: "enabled",
  VIGIL_RATE_LIMITS: JSON.stringify({ requestsPerMinutePerKey: 1_000_000, turnsPerMinutePerAgent: 1_000_000 }),
};

/** wrangler dev for a one-off probe (coldstart, profile-turns): bench vars, stopped on Ctrl-C. */
export async function startProbeServer(repoDir) {
  const server = await startWrangler({ repoDir, vars: BENCH_VARS });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.stop().then(() => process.exit(130)));
  return server;
}
