#!/usr/bin/env node
// Cold-start probe: where a fan-out wave's time goes. Starts its own wrangler dev (bench/lib/server.mjs),
// creates one tenant with N agents each holding one matching subscription, lets them go idle (so each wake starts an
// evicted object, as in the alertness bench), then takes a CPU profile of the workerd isolate over the wave through
// its inspector (Chrome DevTools protocol: Profiler.start/stop) while one journal write wakes all N. Prints wakes/s
// (same measure as bench/alertness.mjs), the profile's busy share, and the top inclusive and self-time functions
// mapped back to their source module (the bundle's `// src/...` module comments).
//
//   node bench/coldstart.mjs [--agents 200] [--idle-ms 15000] [--waves 2] [--no-profile] [--out /tmp/x.cpuprofile]
//   node bench/coldstart.mjs --commits [--agents 200]   (fsyncs per woken agent, with strace; no profile)
//   node bench/coldstart.mjs --analyze /tmp/x.cpuprofile --agents 200
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { Client, openSse } from "./lib/client.mjs";
import { pool } from "./lib/pool.mjs";
import { startProbeServer } from "./lib/server.mjs";
import { argv, option, repoDir } from "./lib/args.mjs";
import { analyze, inspector, moduleMap, report } from "./lib/profiler.mjs";
import { countCommits } from "./lib/commits.mjs";
import { fmt, summarize } from "./lib/stats.mjs";

const agentCount = Number(option("--agents", "200"));
const idleMs = Number(option("--idle-ms", "15000"));
const countingCommits = argv.includes("--commits");
const profile = !argv.includes("--no-profile") && !countingCommits;
// Outside the repo by default: profiles and their bundle copy are large and not results to keep.
const outFile = option("--out", join(os.tmpdir(), `vigil-coldstart-${Date.now()}.cpuprofile`));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (line) => console.log(line);

/** CPU seconds (user + system) of every process in the server's group, by command (workerd, node). */
function groupCpu(groupId) {
  const ps = execFileSync("ps", ["-o", "pid=,args=", "-g", String(groupId)], { encoding: "utf8" });
  const out = {};
  for (const line of ps.split("\n").filter(Boolean)) {
    const [pid, cmd] = line.trim().split(/\s+/);
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      const seconds = (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (100/s)
      const name = `${cmd.split("/").pop()}${line.includes("--inspector-addr") ? " (user worker)" : ""}`;
      out[name] = (out[name] ?? 0) + seconds;
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * Where a cold wake's JavaScript goes, per part: each sample is charged to exactly one part —
 * the innermost frame on its stack that names one (so the parts add up to the JavaScript time); samples under none
 * of ours but inside the Agents SDK are its own per-call work. Names are the bundle's function names.
 */
const PARTS = [
  ["consumer delivery (RPC call; the runtime's actor start)", "deliver", "src/queues/wake-consumer.ts"],
  ["AgentDO constructor: our wiring (statement preparation)", "AgentWiring", "src/objects/agent/wiring.ts"],
  ["AgentDO constructor: Agents SDK and the rest", "AgentDO", "src/objects/agent/agent-do.ts"],
  ["onStart hooks (recovery checks, first SQL)", "runHooks", "src/objects/shared/hooks.ts"],
  ["deliverWake (admission, inbox write; the run drains inline and is charged to the run)", "deliverWake", "src/objects/agent/agent-do.ts"],
  ["the run (run loop, model stream, memory)", "process", "src/objects/agent/runs/run-loop.ts"],
  ["agent: forwarder (report to the tenant)", "flushAll", "src/objects/agent/events/forwarder.ts"],
  ["agent: compaction after the run", "", "src/objects/agent/compaction/driver.ts"],
  ["tenant: run report", "record", "src/objects/tenant/channels/run-reports.ts"],
];
function parts(prof, bundle, agents) {
  const moduleOf = moduleMap(bundle);
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const mod = (f) => (f.url.endsWith("worker.js") ? moduleOf(f.lineNumber) : f.url || "(native)");
  const partOf = new Map();
  const classify = (id) => {
    if (partOf.has(id)) return partOf.get(id);
    let sdk = false;
    let found = null;
    for (let at = id; at !== undefined && !found; at = parent.get(at)) {
      const f = byId.get(at).callFrame;
      const m = mod(f);
      if (m === "npm:agents") sdk = true;
      const hit = PARTS.find(([, name, module]) => m === module && (name === "" || f.functionName === name));
      if (hit) found = hit[0];
    }
    const name = byId.get(id).callFrame.functionName;
    const part = found ?? (name === "(garbage collector)" ? "GC" : name === "(program)" ? "V8 outside JavaScript ((program))" : sdk ? "Agents SDK per-call work (spans, invocation scope)" : "other");
    partOf.set(id, part);
    return part;
  };
  const total = new Map();
  let busy = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = Math.min((prof.timeDeltas[i + 1] ?? 0) / 1000, 1);
    if (byId.get(prof.samples[i]).callFrame.functionName === "(idle)") continue;
    busy += dt;
    const part = classify(prof.samples[i]);
    total.set(part, (total.get(part) ?? 0) + dt);
  }
  log(`\nper part (each sample charged once; ms per woken agent of ${fmt(busy / agents, 2)}):`);
  for (const [k, v] of [...total].sort((a, b) => b[1] - a[1])) log(`  ${fmt(v / agents, 2).padStart(6)}  ${fmt((100 * v) / busy, 1).padStart(5)} %  ${k}`);
}

// Re-analysis of a saved profile: --analyze <file.cpuprofile> (its bundle is saved beside it as <file>.worker.js).
if (option("--analyze")) {
  const file = option("--analyze");
  const saved = JSON.parse(readFileSync(file, "utf8"));
  const bundle = readFileSync(`${file}.worker.js`, "utf8");
  report(saved, bundle, agentCount);
  parts(saved, bundle, agentCount);
  process.exit(0);
}

const server = await startProbeServer(repoDir);
try {
  log(`wrangler dev on ${server.baseUrl}; load ${os.loadavg().map((v) => v.toFixed(1)).join(" / ")}`);
  // Connected before any request: a session opened while a stream was live ended the stream and got no answers.
  const cdp = profile ? await inspector(server.pid) : null;
  if (cdp) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  }
  const operator = new Client(server.baseUrl, server.adminToken);
  const { body: tenant } = await operator.call("POST", "/v1/tenants", { name: `coldstart ${Date.now()}` });
  const c = operator.withToken(tenant.apiKey);
  const gym = (await c.call("POST", "/v1/journal/categories", { name: "gym" })).body.id;
  const created = performance.now();
  const agents = await pool(Array.from({ length: agentCount }, (_, i) => i), 8, async (i) => (await c.call("POST", "/v1/agents", { kind: "bench-coach", displayName: `coach ${i}` })).body.id);
  const createMs = performance.now() - created;
  log(`${agentCount} agents created in ${fmt(createMs / 1000, 1)} s (${fmt(createMs / agentCount, 1)} ms each, 8 in flight)`);
  const items = agents.map((agentId) => ({ agentId, spec: { tokens: [{ tokenClass: "semanticKey", tokenValue: "TASK" }], predicate: { eq: ["task.categoryId", gym] } } }));
  await c.call("POST", "/__bench/tenant/alertness", { op: "subscribe", items }, { expect: [200] });
  log(`idle ${idleMs} ms (local eviction)…`);
  await sleep(idleMs);

  // One wave: a journal write matching every agent; completion counted on the tenant stream (bench/alertness.mjs).
  async function wave(label, profiled) {
    const expected = new Set(agents);
    const terminal = new Map();
    let resolveAll;
    const allDone = new Promise((r) => (resolveAll = r));
    const { eventsHead } = (await c.call("POST", "/__bench/tenant/alertness", { op: "counts" }, { expect: [200] })).body;
    const sse = openSse(`${server.baseUrl}/v1/events/stream?after=${eventsHead}`, c.token, (frame) => {
      if (frame.event !== "run.completed" && frame.event !== "run.failed") return;
      const event = frame.data;
      if (!expected.has(event?.agentId)) return;
      const seen = terminal.get(event.agentId) ?? [];
      seen.push({ runKey: event.runKey, run: event.data.run ?? {} });
      terminal.set(event.agentId, seen);
      if (terminal.size === expected.size) resolveAll();
    });
    await sse.ready;
    sse.done.catch((err) => log(`tenant stream ended: ${err?.message ?? err}`));
    if (profiled) await cdp.send("Profiler.start");
    if (profiled) log(`profiling ${cdp.title}`);
    const cpuBefore = groupCpu(server.pid);
    const startedWall = Date.now();
    const wake = async () => {
      const post = await c.call("POST", "/v1/journal/tasks", { title: `leg day (${label})`, categoryId: gym });
      log(`journal POST answered in ${fmt(post.ms, 0)} ms`);
      await Promise.race([allDone, sleep(Number(option("--wave-timeout-ms", "240000")))]);
    };
    // --commits: the wave's fsyncs per woken agent (strace slows every syscall: its times are not the probe's).
    const commits = countingCommits ? await countCommits(server.pid, wake) : (await wake(), null);
    if (commits) log(`${label} wave: storage commits (fsyncs) per woken agent: ${Object.entries(commits.byKind).map(([k, v]) => `${k} ${fmt(v / agentCount, 2)}`).join(", ")}`);
    const seenMs = Date.now() - startedWall;
    const cpuAfter = groupCpu(server.pid);
    log(`${label} wave: CPU of the server's processes over ${fmt(seenMs / 1000, 1)} s wall: ${Object.entries(cpuAfter).map(([k, v]) => `${k} ${fmt(v - (cpuBefore[k] ?? 0), 2)} s`).join(", ")}`);
    const prof = profiled ? (await cdp.send("Profiler.stop")).profile : null;
    await sleep(2_000);
    sse.close();
    const first = [...terminal.values()].map((s) => s[0].run);
    const ended = first.map((r) => Date.parse(r.endedAt) - startedWall).filter(Number.isFinite);
    const enq = first.map((r) => Date.parse(r.enqueuedAt) - startedWall).filter(Number.isFinite);
    const extra = [...terminal.values()].filter((s) => new Set(s.map((r) => r.runKey)).size !== 1 || s.length !== 1).length;
    const last = Math.max(...ended);
    log(`${label} wave: terminal ${terminal.size}/${agentCount}, agents with ≠ 1 run: ${extra}; all seen after ${fmt(seenMs / 1000, 1)} s`);
    log(`${label} wave: wakes/s = ${fmt(terminal.size / (last / 1000), 1)} (last endedAt ${fmt(last / 1000, 1)} s after the POST)`);
    log(`enqueuedAt after POST (ms): ${JSON.stringify(summarize(enq))}`);
    log(`endedAt after POST (ms):    ${JSON.stringify(summarize(ended))}`);
    return prof;
  }
  const prof = await wave("cold", Boolean(cdp));
  // A second wave right after: the same agents, now started (none idle past the 10 s local eviction).
  const warm = Number(option("--waves", "1")) > 1 ? await wave("warm", Boolean(cdp)) : null;
  if (warm) {
    writeFileSync(`${outFile}.warm`, JSON.stringify(warm));
    const a = analyze(warm, () => "?");
    log(`warm wave profile: ${fmt(a.total - a.idle, 0)} ms running JavaScript of ${fmt(a.total, 0)} ms; per woken agent ${fmt((a.total - a.idle) / agentCount, 1)} ms`);
  }
  if (prof) {
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, JSON.stringify(prof));
    const bundle = readFileSync(join(server.workDir, "bundle", "worker.js"), "utf8");
    writeFileSync(`${outFile}.worker.js`, bundle);
    report(prof, bundle, agentCount);
    parts(prof, bundle, agentCount);
    log(`→ ${outFile}`);
  }
  cdp?.close();
} finally {
  const stopped = await server.stop();
  if (stopped.orphans.length) console.error(`left: ${stopped.orphans.join(", ")}`);
}
