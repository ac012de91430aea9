#!/usr/bin/env node
// Hot-path probe: where a warm streaming turn's and an append + assemble op's JavaScript goes. Starts
// its own wrangler dev (bench/lib/server.mjs), warms one agent up, then takes a CPU profile of the workerd isolate
// (bench/lib/profiler.mjs) over N streaming turns (POST /v1/agents/:id/messages, Accept: text/event-stream, read to
// the end of the stream), and another over the history bench's `appendAndAssemble` op on a 100-message thread.
// Prints each profile's top inclusive and self-time functions by source module. Not a benchmark: the profiler's
// own cost inflates every figure; read the shares.
//
// With --heap, the same units also run under V8's sampling heap profiler (after the CPU profile, not beside it), and the
// bytes allocated per unit are printed by allocating function and by source module (what the GC has to collect).
//
//   node bench/profile-turns.mjs [--turns 40] [--ops 300] [--only turns|ops] [--out /tmp/x] [--heap]
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { Client } from "./lib/client.mjs";
import { inspector, moduleMap, report } from "./lib/profiler.mjs";
import { startProbeServer } from "./lib/server.mjs";
import { option, repoDir } from "./lib/args.mjs";

const turns = Number(option("--turns", "40"));
const ops = Number(option("--ops", "300"));
const only = option("--only", "turns,ops").split(",");
const outBase = option("--out", join(os.tmpdir(), `vigil-hotpath-${Date.now()}`));
const log = (line) => console.log(line);

/** One streaming turn; with `timeline`, pushes each SSE frame's type and arrival (ms after the POST) into it. */
async function streamingTurn(client, agentId, text, timeline = null) {
  const started = performance.now();
  const res = await fetch(`${client.baseUrl}/v1/agents/${agentId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${client.token}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ text }),
  });
  let body = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    const at = performance.now() - started;
    const text = decoder.decode(chunk, { stream: true });
    body += text;
    if (timeline) for (const m of text.matchAll(/event: (\S+)/g)) timeline.push([m[1], at]);
  }
  if (res.status !== 200 || !body.includes("event: run.completed")) throw new Error(`streaming turn → HTTP ${res.status}: ${body.slice(-300)}`);
}

const server = await startProbeServer(repoDir);
try {
  log(`wrangler dev on ${server.baseUrl}; load ${os.loadavg().map((v) => v.toFixed(1)).join(" / ")}`);
  // Connected before any request (bench/coldstart.mjs: a session opened while a stream was live ended the stream).
  const cdp = await inspector(server.pid, log);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
  const operator = new Client(server.baseUrl, server.adminToken);
  const { body: tenant } = await operator.call("POST", "/v1/tenants", { name: `hotpath ${Date.now()}` });
  const c = operator.withToken(tenant.apiKey);
  const bundle = readFileSync(join(server.workDir, "bundle", "worker.js"), "utf8");
  const profiled = async (label, units, unit, body) => {
    await cdp.send("Profiler.start");
    const started = performance.now();
    await body();
    const wallMs = performance.now() - started;
    const prof = (await cdp.send("Profiler.stop")).profile;
    writeFileSync(`${outBase}.${label}.cpuprofile`, JSON.stringify(prof));
    // Beside the profile under the name `coldstart.mjs --analyze` reads.
    writeFileSync(`${outBase}.${label}.cpuprofile.worker.js`, bundle);
    log(`\n=== ${label}: ${units} ${unit}s in ${wallMs.toFixed(0)} ms wall (${(wallMs / units).toFixed(2)} ms each, profiler on)`);
    report(prof, bundle, units, log, unit, { self: 70, incl: 140, modules: 30 });
    log(`→ ${outBase}.${label}.cpuprofile (re-analyze: node bench/coldstart.mjs --analyze <file> --agents ${units})`);
    if (process.argv.includes("--heap")) await heapSampled(label, units, unit, body);
  };
  // Allocation sampling (V8's sampling heap profiler, every ~4 KiB on average): bytes allocated per unit, by the
  // allocating function (self) and by source module. Sampled objects still alive at the end are reported as well.
  const heapSampled = async (label, units, unit, body) => {
    const moduleOf = moduleMap(bundle);
    await cdp.send("HeapProfiler.enable");
    await cdp.send("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    await body();
    const { profile } = await cdp.send("HeapProfiler.stopSampling");
    writeFileSync(`${outBase}.${label}.heapprofile`, JSON.stringify(profile));
    const byFunction = new Map();
    const byModule = new Map();
    let total = 0;
    const walk = (node, srcCaller) => {
      const f = node.callFrame;
      const mod = f.url.endsWith("worker.js") ? moduleOf(f.lineNumber) : f.url || "(native)";
      const caller = mod.startsWith("src/") ? `${f.functionName || "(anonymous)"} [${mod}]` : srcCaller;
      if (node.selfSize > 0) {
        total += node.selfSize;
        const key = `${f.functionName || "(anonymous)"} [${mod}]${mod.startsWith("src/") ? "" : `  < ${srcCaller ?? "-"}`}`;
        byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
        byModule.set(mod, (byModule.get(mod) ?? 0) + node.selfSize);
      }
      for (const child of node.children ?? []) walk(child, caller);
    };
    walk(profile.head, null);
    const kb = (bytes) => (bytes / 1024 / units).toFixed(1).padStart(8);
    log(`\n=== ${label}: allocated ${kb(total).trim()} KiB per ${unit} (sampled)`);
    log("by module (KiB per unit):");
    for (const [k, v] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, 25)) log(`  ${kb(v)}  ${k}`);
    log("by allocating function, with its nearest src/ caller (KiB per unit):");
    for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 40)) log(`  ${kb(v)}  ${k}`);
    log(`→ ${outBase}.${label}.heapprofile`);
  };

  if (only.includes("turns")) {
    const { body: agent } = await c.call("POST", "/v1/agents", { kind: "bench-lean", displayName: "profiled" });
    for (let i = 0; i < 10; i++) await streamingTurn(c, agent.id, `warm-up ${i}`);
    // Where a turn's wall time goes, without the profiler: the median arrival of each frame (by position) after the POST.
    const timelines = [];
    for (let i = 0; i < 30; i++) {
      const timeline = [];
      await streamingTurn(c, agent.id, `timed ${i}`, timeline);
      timelines.push(timeline);
    }
    const empty = [];
    for (let i = 0; i < 30; i++) empty.push((await c.call("GET", "/healthz")).ms);
    const med = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
    log(`\n=== frame arrival, median of 30 streaming turns (ms after the POST; empty request p50 ${med(empty).toFixed(2)} ms)`);
    const width = Math.max(...timelines.map((t) => t.length));
    for (let k = 0; k < width; k++) {
      const at = timelines.map((t) => t[k]).filter(Boolean);
      log(`  ${String(k).padStart(2)} ${at[0][0].padEnd(18)} ${med(at.map((x) => x[1])).toFixed(2)}`);
    }
    await profiled("turns", turns, "turn", async () => {
      for (let i = 0; i < turns; i++) await streamingTurn(c, agent.id, `hello ${i}`);
    });
  }
  if (only.includes("ops")) {
    const { body: agent } = await c.call("POST", "/v1/agents", { kind: "bench-history", displayName: "profiled history" });
    const threadId = "bench-profile-100";
    await c.benchOp(agent.id, { op: "seed", threadId, count: 100 });
    while ((await c.call("POST", `/__bench/agents/${agent.id}/op`, { op: "compact", threadId }, { expect: [200] })).body.done > 0);
    await c.benchOp(agent.id, { op: "appendAndAssemble", threadId, iterations: 30 });
    await profiled("ops", ops, "op", async () => {
      for (let left = ops; left > 0; left -= 30) await c.benchOp(agent.id, { op: "appendAndAssemble", threadId, iterations: Math.min(30, left) });
    });
  }
  cdp.close();
} finally {
  const stopped = await server.stop();
  if (stopped.orphans.length) console.error(`left: ${stopped.orphans.join(", ")}`);
}
