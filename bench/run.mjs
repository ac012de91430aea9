#!/usr/bin/env node
// `npm run bench` — SPEC §11 benchmarks against a private `wrangler dev`.
//   node bench/run.mjs [--only history|wake|alertness] [--quick]
// Prints a table per benchmark and writes bench/results/<name>-<timestamp>.json.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "./lib/client.mjs";
import { BENCH_VARS, localObservability, startWrangler } from "./lib/server.mjs";
import { argv, option } from "./lib/args.mjs";
import { roundAll } from "./lib/stats.mjs";
import { runHistoryBench } from "./history.mjs";
import { runWakeBench } from "./wake.mjs";
import { runAlertnessBench } from "./alertness.mjs";
import { runLeanBench } from "./lean.mjs";
import { runRowsBench } from "./rows.mjs";
import { summaryRows } from "./summary.mjs";
import { table } from "./lib/stats.mjs";

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoDir = dirname(benchDir);
const resultsDir = join(benchDir, "results");

const flag = (name) => argv.includes(name);
if (flag("--help") || flag("-h")) {
  console.log("usage: npm run bench [-- --only history|wake|alertness|lean|rows] [-- --quick]");
  process.exit(0);
}
const only = option("--only");
const quick = flag("--quick");
const verbose = flag("--verbose");
// Per-benchmark parameter overrides, e.g. VIGIL_BENCH_PARAMS='{"history":{"sizes":[100,1000]},"lean":{"agedEvents":10000}}'.
const overrides = JSON.parse(process.env.VIGIL_BENCH_PARAMS ?? "{}");

// In this order: alertness last, because every agent it wakes is activated again by its watchdog 30 s later (the
// crash bound on its run's report), which fell into the next benchmark's timing (docs/decisions.md "Lean bench: timed
// requests one at a time, commits counted (session 13, lead)").
const all = {
  lean: { run: runLeanBench, quick: { streamingTurns: 20, warmupTurns: 3, agedEvents: 10_000, storageTurns: 40, toolTurns: 10 } },
  rows: { run: runRowsBench, quick: { units: 20, warmup: 2 } },
  history: { run: runHistoryBench, quick: { sizes: [100, 2_000, 10_000], rounds: 5, iterations: 20 } },
  wake: { run: runWakeBench, quick: { wakes: 30, warmupWakes: 3, sqliteEvery: 5 } },
  // quick: at 200 vs 20 matches the per-change part dominates, so the match-ratio bound is relaxed.
  alertness: { run: runAlertnessBench, quick: { subscriptions: 2_000, matchingA: 200, matchingB: 20, matchRounds: 4, deliveries: 300, triggerDeliveries: 100, minMatchRatio: 1.5 } },
};
const selected = only ? only.split(",") : Object.keys(all);
for (const name of selected) if (!all[name]) throw new Error(`unknown benchmark "${name}" (known: ${Object.keys(all).join(", ")})`);

const log = (line) => console.log(line);
const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z").replace(/:/g, "-");

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

function contextWindowMessages() {
  const m = /contextWindowMessages:\s*([\d_]+)/.exec(readFileSync(join(repoDir, "src/config.ts"), "utf8"));
  return m ? Number(m[1].replace(/_/g, "")) : null;
}

const cpus = os.cpus();
const machine = {
  os: `${os.type()} ${os.release()} ${os.arch()}`,
  cpuModel: cpus[0]?.model ?? "unknown",
  cpuCount: cpus.length,
  totalMemoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
  node: process.version,
  wrangler: readJson(join(repoDir, "node_modules/wrangler/package.json"))?.version ?? "unknown",
  localObservability,
};

let server = null;
let stopping = null;
let interrupted = false;
const stopServer = async () => {
  if (!server) return null;
  stopping ??= server.stop();
  return stopping;
};
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, async () => {
    interrupted = true;
    console.error(`\n${signal}: stopping wrangler dev…`);
    await stopServer();
    process.exit(130);
  });
}

let exitCode = 0;
const benchStarted = Date.now();
try {
  log(`Vigil bench — ${machine.cpuModel} × ${machine.cpuCount}, node ${machine.node}, wrangler ${machine.wrangler}${quick ? " (quick mode)" : ""}`);
  log(`wrangler's local observability collector: ${localObservability ? "on (VIGIL_BENCH_LOCAL_OBSERVABILITY=1)" : "off (VIGIL_BENCH_LOCAL_OBSERVABILITY=1 measures with it)"}`);
  log("bundling the worker and starting wrangler dev…");
  server = await startWrangler({
    repoDir,
    vars: BENCH_VARS,
    log: verbose ? (line) => console.log(`  [wrangler] ${line}`) : () => {},
  });
  log(`wrangler dev ready on ${server.baseUrl} (bundle ${(server.bundleMs / 1000).toFixed(1)} s, start ${(server.startupMs / 1000).toFixed(1)} s; pid ${server.pid}, state in ${server.persistDir})`);

  const operator = new Client(server.baseUrl, server.adminToken);
  const { body: tenant } = await operator.call("POST", "/v1/tenants", { name: `bench ${stamp}` });
  const client = operator.withToken(tenant.apiKey);
  log(`tenant ${tenant.tenant.id} created`);

  const outputs = [];
  for (const name of selected) {
    const started = Date.now();
    log(`\n▶ ${name}`);
    const params = { ...(quick ? all[name].quick : {}), ...(overrides[name] ?? {}), ...(name === "history" ? { contextWindowMessages: contextWindowMessages() } : {}) };
    const result = await all[name].run({ client, operator, log, params, server });
    const durationSeconds = (Date.now() - started) / 1000;
    const file = join(resultsDir, `${name}-${stamp}.json`);
    mkdirSync(resultsDir, { recursive: true });
    const { text, incomplete, name: _name, ...rest } = result;
    if (incomplete) exitCode = 1;
    writeFileSync(file, JSON.stringify(roundAll({ benchmark: name, incomplete: Boolean(incomplete), startedAt: new Date(started).toISOString(), durationSeconds, quick, machine: { ...machine, loadAverage: os.loadavg() }, server: { url: server.baseUrl, bundleMs: server.bundleMs, startupMs: server.startupMs, mode: "wrangler deploy --dry-run bundle served by wrangler dev --no-bundle" }, ...rest }), null, 2) + "\n");
    outputs.push({ name, text, file, durationSeconds, result: rest });
    log(`  done in ${durationSeconds.toFixed(1)} s`);
  }

  for (const { name, text, file } of outputs) {
    log(`\n═══ ${name} ═══`);
    log(text);
    log(`→ ${relative(process.cwd(), file)}`);
  }

  // One table of the issue-12 figures, each a ratio or count measured side by side in this run.
  const summary = summaryRows(Object.fromEntries(outputs.map((o) => [o.name, o.result])));
  const summaryFile = join(resultsDir, `summary-${stamp}.json`);
  const durations = Object.fromEntries(outputs.map((o) => [o.name, o.durationSeconds]));
  const totalSeconds = (Date.now() - benchStarted) / 1000;
  writeFileSync(summaryFile, JSON.stringify(roundAll({ benchmark: "summary", quick, machine: { ...machine, loadAverage: os.loadavg() }, totalSeconds, durationSeconds: durations, rows: summary }), null, 2) + "\n");
  log(`\n═══ summary ═══`);
  log(table(["measure", "value", "goal", "verdict"], summary.map((r) => [r.measure, r.display, r.goal, r.verdict])));
  log(`whole run ${(totalSeconds / 60).toFixed(1)} min (${Object.entries(durations).map(([name, s]) => `${name} ${s.toFixed(0)} s`).join(", ")}; load average ${os.loadavg().map((v) => v.toFixed(1)).join(" / ")})`);
  log(`→ ${relative(process.cwd(), summaryFile)}`);
} catch (err) {
  exitCode = 1;
  if (interrupted) await new Promise(() => {}); // the signal handler stops wrangler and exits
  console.error(`\nbench failed: ${err?.stack ?? err}`);
  if (server) console.error(`\nlast wrangler output:\n${server.output.slice(-30).join("\n")}`);
} finally {
  const stopped = await stopServer();
  if (stopped) {
    if (stopped.orphans.length) {
      console.error(`warning: processes left in wrangler's process group: ${stopped.orphans.join(", ")}`);
      exitCode ||= 1;
    } else log("\nwrangler dev stopped (process group empty)");
  }
}
process.exit(exitCode);
