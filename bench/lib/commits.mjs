// Storage commits per unit of work, counted as the fsyncs of the user worker's workerd. Locally each
// Durable Object commit is an fsync of its SQLite WAL on workerd's only thread; in production it is a replicated write
// that the output gate waits for. Counted with strace when the machine has it (attached only around untimed work:
// tracing slows every syscall), else not counted.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { userWorkerPid } from "./server.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function straceAvailable() {
  try {
    execFileSync("strace", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const tracerOf = (pid) => Number(/TracerPid:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);

/**
 * What an fsync'd path belongs to: a Durable Object's WAL by namespace; workerd's local alarm bookkeeping (the
 * namespace's `metadata.sqlite`, on `setAlarm`); the namespace's directory (a WAL file made anew: an object's first
 * commit after its WAL was deleted at its last close); or the rest.
 */
export function commitKind(path) {
  if (path.includes("/ratelimit/")) return "rate limiter (local simulation)";
  const m = /\/do\/[^/]*-(\w+?)DO(\/([^/]+))?$/.exec(path);
  if (!m) return "other";
  const object = m[1].toLowerCase();
  if (!m[3]) return `${object} directory (WAL made anew)`;
  if (m[3].startsWith("metadata.")) return `${object} alarms (workerd's local bookkeeping)`;
  return m[3].endsWith("-wal") ? object : `${object} checkpoint`;
}

/**
 * Runs `work` with strace counting the user worker's fsyncs; resolves to `{ byKind, total }` (counts, not per unit),
 * or null when strace is missing or cannot attach.
 */
export async function countCommits(groupId, work) {
  const pid = straceAvailable() ? userWorkerPid(groupId) : null;
  if (!pid) {
    await work();
    return null;
  }
  const dir = mkdtempSync(join(os.tmpdir(), "vigil-commits-"));
  const out = join(dir, "strace.out");
  const tracer = spawn("strace", ["-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-p", pid, "-o", out], { stdio: "ignore" });
  const exited = new Promise((resolve) => tracer.once("exit", resolve));
  for (let i = 0; i < 50 && tracerOf(pid) === 0 && tracer.exitCode === null; i++) await sleep(100);
  if (tracerOf(pid) === 0) {
    tracer.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    await work();
    return null;
  }
  try {
    await work();
  } finally {
    tracer.kill("SIGINT");
    await exited;
  }
  const byKind = {};
  let total = 0;
  for (const line of readFileSync(out, "utf8").split("\n")) {
    const m = /f(?:data)?sync\(\d+<([^>]*)>\)\s*=\s*0/.exec(line);
    if (!m) continue;
    const kind = commitKind(m[1]);
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    total += 1;
  }
  rmSync(dir, { recursive: true, force: true });
  return { byKind, total };
}
