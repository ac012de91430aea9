// The workerd isolate's CPU profile over the Chrome DevTools protocol, and its analysis by source module
// (bench/coldstart.mjs, bench/profile-turns.mjs).
import { execFileSync } from "node:child_process";
import { fmt } from "./stats.mjs";
import { userWorkerPid } from "./server.mjs";

/**
 * A minimal CDP session with workerd's own inspector (Node ≥ 22 has a global WebSocket). wrangler's inspector proxy
 * (`--inspector-port`) refused a scripted session, so the workerd started with `--inspector-addr=127.0.0.1:0` is
 * found in the server's process group and its listening ports probed for `/json/list`.
 */
export async function inspector(groupId, log = console.log) {
  const pid = userWorkerPid(groupId);
  const ports = execFileSync("ss", ["-ltnp"], { encoding: "utf8" }).split("\n").filter((l) => l.includes(`pid=${pid},`)).map((l) => /127\.0\.0\.1:(\d+)/.exec(l)?.[1]);
  const open = (url) =>
    new Promise((resolve) => {
      const ws = new WebSocket(url);
      ws.onopen = () => resolve(ws);
      ws.onerror = () => resolve(null);
      setTimeout(() => resolve(null), 3_000);
    });
  // workerd's first session on the inspector never answered (tried: before any request, during a stream, after one);
  // a second session opened beside it does. The first is kept open until the end.
  let ws = null;
  let first = null;
  for (const port of ports) {
    first = await open(`ws://127.0.0.1:${port}/core:user:vigil`);
    if (!first) continue;
    ws = await open(`ws://127.0.0.1:${port}/core:user:vigil`);
    break;
  }
  if (!ws) throw new Error("workerd inspector not found");
  let id = 0;
  const waiting = new Map();
  ws.onmessage = (msg) => {
    if (process.env.CDP_DEBUG) log(`  cdp ← ${String(msg.data).slice(0, 160)}`);
    const data = JSON.parse(msg.data);
    if (data.id && waiting.has(data.id)) {
      waiting.get(data.id)(data);
      waiting.delete(data.id);
    }
  };
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const mid = ++id;
      waiting.set(mid, (data) => (data.error ? reject(new Error(`${method}: ${JSON.stringify(data.error)}`)) : resolve(data.result)));
      ws.send(JSON.stringify({ id: mid, method, params }));
      setTimeout(() => waiting.has(mid) && reject(new Error(`${method}: no answer`)), 30_000);
    });
  return { send, close: () => (ws.close(), first.close()), title: ws.url };
}

/** Line → source module, from the esbuild bundle's `// src/path.ts` comments. */
export function moduleMap(bundleText) {
  const starts = [];
  bundleText.split("\n").forEach((line, i) => {
    const m = /^\/\/ ((?:src|node_modules|migrations)\/\S+)$/.exec(line);
    if (m) starts.push([i, m[1].replace(/^node_modules\/(\.pnpm\/)?/, "npm:")]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "?";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= line) (found = starts[mid][1]), (lo = mid + 1);
      else hi = mid - 1;
    }
    return found.startsWith("npm:") ? found.split("/").slice(0, found.startsWith("npm:@") ? 2 : 1).join("/") : found;
  };
}

export function analyze(prof, moduleOf, top = { self: 40, incl: 60, modules: 25 }) {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n) => {
    const f = n.callFrame;
    const mod = f.url.endsWith("worker.js") ? moduleOf(f.lineNumber) : f.url || "(native)";
    return `${f.functionName || "(anonymous)"} [${mod}]`;
  };
  const self = new Map();
  const incl = new Map();
  const selfModule = new Map();
  let total = 0;
  let idle = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    // The sampler only runs while the isolate holds its lock: a gap far above the interval is time the isolate was
    // not running JavaScript (idle, or another isolate), not the previous sample's function.
    const gap = (prof.timeDeltas[i + 1] ?? 0) / 1000;
    const dt = Math.min(gap, 1);
    idle += gap - dt;
    total += gap;
    const node = byId.get(prof.samples[i]);
    const name = node.callFrame.functionName;
    if (name === "(idle)" || name === "(program)") {
      if (name === "(idle)") idle += dt;
      self.set(name, (self.get(name) ?? 0) + dt);
      continue;
    }
    const l = label(node);
    self.set(l, (self.get(l) ?? 0) + dt);
    const mod = /\[(.*)\]$/.exec(l)[1];
    selfModule.set(mod, (selfModule.get(mod) ?? 0) + dt);
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const k = label(byId.get(id));
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
  }
  const first = (map, count) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, count);
  return { total, idle, self: first(self, top.self), incl: first(incl, top.incl), selfModule: first(selfModule, top.modules) };
}

export function report(prof, bundle, agents, log = console.log, unit = "woken agent", top = undefined) {
  const a = analyze(prof, moduleMap(bundle), top);
  const busy = a.total - a.idle;
  log(`\nprofile: ${fmt(a.total, 0)} ms sampled, ${fmt(busy, 0)} ms running JavaScript (${fmt((100 * busy) / a.total, 0)} %); per ${unit} ${fmt(busy / agents, 2)} ms`);
  log("\nself time by module (ms):");
  for (const [k, v] of a.selfModule) log(`  ${fmt(v, 0).padStart(7)}  ${fmt((100 * v) / busy, 1).padStart(5)} %  ${k}`);
  log("\ninclusive (ms):");
  for (const [k, v] of a.incl) log(`  ${fmt(v, 0).padStart(7)}  ${fmt((100 * v) / busy, 1).padStart(5)} %  ${k}`);
  log("\nself (ms):");
  for (const [k, v] of a.self) log(`  ${fmt(v, 0).padStart(7)}  ${k}`);
}

