import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readSse, VigilClient } from "../../src/client";
import { record, recordingFetch } from "./contract";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER_BIN = join(REPO_ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
// .node-runtime (189 MB, the project-local Node for old machines) is not needed: servers run on process.execPath.
const NOT_COPIED = new Set([".git", "node_modules", ".node-runtime", ".wrangler", ".dev.vars", "test-results"]);

/**
 * A throwaway copy of the checkout (node_modules linked, no local state or secrets). `wrangler dev`
 * watches its sources and reloads on change, so servers run from a snapshot: edits made while the
 * suite runs cannot restart a server mid-test, and a restarted server runs the code it started with.
 */
export function snapshotCheckout(parent: string = tmpdir()): string {
  const dir = mkdtempSync(join(parent, "checkout-"));
  for (const entry of readdirSync(REPO_ROOT)) {
    if (!NOT_COPIED.has(entry)) cpSync(join(REPO_ROOT, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

export interface ServerOptions {
  /** Persistence directory; a fresh temp dir when omitted (removed by `dispose`). */
  persistDir?: string;
  /** Extra worker vars, e.g. `{ VIGIL_BENCH: "enabled" }` or the test seams a file needs, `{ VIGIL_FAULTS: "dumps" }`. */
  vars?: Record<string, string>;
  /** Default: very high limits, so a test file never trips the per-key budget by accident. */
  rateLimits?: { requestsPerMinutePerKey?: number; turnsPerMinutePerAgent?: number } | null;
  /** wrangler's --log-level (default "warn"); "log" keeps the Worker's console.log lines in `logs()`. */
  logLevel?: "debug" | "info" | "log" | "warn" | "error";
  /** Also append wrangler's output to this file (the shared server's log, read by other processes). */
  logFile?: string;
}

/** What a test file needs of a server: its address and credentials (a private DevServer, or the shared one). */
export interface VigilServer {
  readonly url: string;
  readonly adminToken: string;
  readonly masterKey: string;
  client(token?: string): VigilClient;
  tenant(name?: string): Promise<{ tenantId: string; apiKey: string; client: VigilClient }>;
  logs(lines?: number): string;
}

/** The clients every server hands out, from its address and operator token (private and shared servers alike). */
export abstract class ServerClients {
  abstract readonly url: string;
  abstract readonly adminToken: string;

  /** A client with the given credential (default: the operator token). */
  client(token: string = this.adminToken): VigilClient {
    return new VigilClient({ baseUrl: this.url, token, fetch: recordingFetch() });
  }

  /** A fresh tenant and a client holding its first API key. */
  async tenant(name = "e2e"): Promise<{ tenantId: string; apiKey: string; client: VigilClient }> {
    const created = await this.client().createTenant({ name });
    return { tenantId: created.tenant.id, apiKey: created.apiKey, client: this.client(created.apiKey) };
  }
}

/**
 * Runs wrangler as its child and leads the process group. Its stdin is a pipe from the test process:
 * when that closes — the test process ended, even by SIGKILL — it kills the whole group, so no
 * wrangler or workerd can outlive the tests.
 */
const SUPERVISOR = `
const { spawn } = require("node:child_process");
const child = spawn(process.execPath, process.argv.slice(1), { stdio: ["ignore", "inherit", "inherit"] });
const killGroup = () => { try { process.kill(0, "SIGKILL"); } catch {} };
process.stdin.on("end", killGroup);
process.stdin.on("error", killGroup);
process.stdin.resume();
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => {});
child.on("exit", (code) => process.exit(code ?? 1));
`;

/** Every server this process started, so none survives the test process. */
const live = new Set<DevServer>();
process.on("exit", () => {
  for (const server of live) server.killSync();
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    for (const server of live) server.killSync();
    process.kill(process.pid, signal);
  });
}

/**
 * A real `wrangler dev` (workerd + local persistence) on a free port, in its own process group so
 * it can be stopped gracefully, SIGKILLed whole (crash simulation) and restarted on the same state.
 */
export class DevServer extends ServerClients implements VigilServer {
  readonly adminToken = `e2e-admin-${randomBytes(12).toString("hex")}`;
  readonly masterKey = randomBytes(32).toString("base64");
  readonly persistDir: string;
  private readonly ownsPersistDir: boolean;
  private readonly scratchDir: string;
  /** The code this server runs: a snapshot taken when it was created (see snapshotCheckout). */
  private readonly checkout: string;
  private vars: Record<string, string>;
  private readonly logLevel: NonNullable<ServerOptions["logLevel"]>;
  private readonly logFile: string | undefined;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private output: string[] = [];
  port = 0;

  private constructor(options: ServerOptions) {
    super();
    this.scratchDir = mkdtempSync(join(tmpdir(), "vigil-e2e-"));
    this.checkout = snapshotCheckout(this.scratchDir);
    this.ownsPersistDir = options.persistDir === undefined;
    this.logLevel = options.logLevel ?? "warn";
    this.logFile = options.logFile;
    this.persistDir = options.persistDir ?? join(this.scratchDir, "state");
    const limits = options.rateLimits === undefined ? { requestsPerMinutePerKey: 100_000, turnsPerMinutePerAgent: 100_000 } : options.rateLimits;
    // The per-client budget is the Rate Limiting binding's (wrangler.toml `[[ratelimits]]`): set it in this server's snapshot.
    if (limits?.requestsPerMinutePerKey !== undefined) {
      const toml = join(this.checkout, "wrangler.toml");
      writeFileSync(toml, readFileSync(toml, "utf8").replace(/simple = \{ limit = \d+, period = 60 \}/, `simple = { limit = ${limits.requestsPerMinutePerKey}, period = 60 }`));
    }
    this.vars = {
      VIGIL_ADMIN_TOKEN: this.adminToken,
      VIGIL_MASTER_KEY: this.masterKey,
      // No test seam unless the file names it in `vars` (VIGIL_FAULTS, docs/decisions/test-seams.md): production config.
      VIGIL_MODE: "local",
      ...(limits ? { VIGIL_RATE_LIMITS: JSON.stringify(limits) } : {}),
      ...options.vars,
    };
  }

  static async start(options: ServerOptions = {}): Promise<DevServer> {
    const server = new DevServer(options);
    // A port free when probed can be taken by another process (other test files' workerds bind ports all the time)
    // before wrangler binds it: a server that exits before it is healthy is started again on a fresh port.
    for (let attempt = 1; ; attempt++) {
      server.port = await freePort();
      try {
        await server.launch();
        return server;
      } catch (error) {
        if (attempt >= 3 || !String(error).includes("exited before it was healthy")) {
          await server.dispose();
          throw error;
        }
      }
    }
  }

  /** The process group id of the running server (its supervisor's pid). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The last lines wrangler printed (for failure messages). */
  logs(lines = 60): string {
    return this.output.slice(-lines).join("");
  }

  /** Graceful stop: SIGINT to the group, as Ctrl-C would; SIGKILL if it lingers. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (!this.child) return;
    this.signalGroup("SIGINT");
    const stopped = await Promise.race([this.exited.then(() => true), delay(timeoutMs).then(() => false)]);
    if (!stopped) this.signalGroup("SIGKILL");
    await this.reap();
  }

  /** Crash: SIGKILL the whole process group (wrangler, workerd, esbuild) with no chance to flush. */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.signalGroup("SIGKILL");
    await this.reap();
  }

  /** Changes worker vars for the next launch (a master key rotation: a new keyring on the same state); `null` removes one. */
  setVars(changes: Record<string, string | null>): void {
    const next = { ...this.vars };
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) delete next[key];
      else next[key] = value;
    }
    this.vars = next;
  }

  /** Starts again on the same port and the same persisted state. */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  /** Starts a stopped or killed server again on the same state. */
  async launch(): Promise<void> {
    if (this.child) throw new Error("the server is already running");
    const inspectorPort = await freePort();
    // An empty env file keeps the repo's .dev.vars out: the vars below are the whole environment.
    const envFile = join(this.scratchDir, "empty.env");
    writeFileSync(envFile, "");
    const args = [
      "-e",
      SUPERVISOR,
      WRANGLER_BIN,
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(this.port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      this.persistDir,
      "--env-file",
      envFile,
      "--show-interactive-dev-session=false",
      "--log-level",
      this.logLevel,
      ...Object.entries(this.vars).flatMap(([key, value]) => ["--var", `${key}:${value}`]),
    ];
    this.output = [];
    const child = spawn(process.execPath, args, {
      cwd: this.checkout,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      // wrangler's local observability collector records a span per storage call in a SQLite trace store of the same
      // workerd; no test reads it, and it slows every request.
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0", X_LOCAL_OBSERVABILITY: "false" },
    });
    this.child = child;
    live.add(this);
    const record = (chunk: Buffer) => {
      this.output.push(chunk.toString("utf8"));
      if (this.logFile) appendFileSync(this.logFile, chunk);
      if (this.output.length > 400) this.output.splice(0, this.output.length - 400);
    };
    child.stdout!.on("data", record);
    child.stderr!.on("data", record);
    this.exited = new Promise((resolveExit) => child.once("exit", () => resolveExit()));
    try {
      await this.waitForHealth(60_000);
    } catch (error) {
      await this.kill();
      throw error;
    }
  }

  /** Stops the server and removes its temp dirs. */
  async dispose(): Promise<void> {
    await this.stop();
    live.delete(this);
    if (this.ownsPersistDir) rmSync(this.persistDir, { recursive: true, force: true });
    rmSync(this.scratchDir, { recursive: true, force: true });
  }

  /** True while any process of the server's group is alive (zombies awaiting reaping do not count). */
  groupAlive(pid = this.child?.pid): boolean {
    if (pid === undefined) return false;
    const members = livingGroupMembers(pid);
    if (members) return members.length > 0;
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  killSync(): void {
    if (this.child?.pid !== undefined) this.signalGroup("SIGKILL");
  }

  private async waitForHealth(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => {
      exited = true;
    });
    while (Date.now() < deadline) {
      if (exited) throw new Error(`wrangler dev exited before it was healthy:\n${this.logs()}`);
      try {
        const response = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(2_000) });
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await delay(150);
    }
    throw new Error(`wrangler dev was not healthy within ${timeoutMs} ms:\n${this.logs()}`);
  }

  /** Waits for the leader to exit and makes sure nothing of its group (workerd) outlives it. */
  private async reap(): Promise<void> {
    const pid = this.child?.pid;
    await Promise.race([this.exited, delay(10_000)]);
    for (let i = 0; i < 50 && this.groupAlive(pid); i++) {
      this.signalGroup("SIGKILL", pid);
      await delay(100);
    }
    if (this.groupAlive(pid)) throw new Error(`processes of group ${pid} survived SIGKILL`);
    this.child = null;
  }

  private signalGroup(signal: NodeJS.Signals, pid = this.child?.pid): void {
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is already gone
    }
  }
}

/** Processes of a process group that are not zombies, from Linux /proc; null where there is no /proc. */
function livingGroupMembers(pgid: number): number[] | null {
  if (!existsSync("/proc/self/stat")) return null;
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid pgrp …" — comm may contain spaces, so parse after the last ")".
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z") members.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return members;
}

/** A TCP port that is free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolveDelay) => setTimeout(resolveDelay, ms));
}

/** Polls `check` until it returns a truthy value. */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ""}`);
    await delay(intervalMs);
  }
}

export interface RawResponse<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

/** One raw HTTP call (for the cases a typed client would refuse to send). */
export async function raw<T = any>(url: string, init: RequestInit = {}): Promise<RawResponse<T>> {
  const response = await fetch(url, init);
  await record(init.method ?? "GET", url, response);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, text, body: body as T };
}

/** Reads SSE frames from a response until `stop` says so or the timeout passes; then cancels the body. */
export async function collectSse(
  response: Response,
  stop: (frames: Array<{ id?: string; event: string; data: any }>) => boolean,
  timeoutMs = 15_000,
): Promise<Array<{ id?: string; event: string; data: any }>> {
  const frames: Array<{ id?: string; event: string; data: any }> = [];
  const timer = setTimeout(() => void response.body?.cancel().catch(() => undefined), timeoutMs);
  try {
    for await (const frame of readSse(response.body!)) {
      frames.push({ ...(frame.id !== undefined ? { id: frame.id } : {}), event: frame.event, data: JSON.parse(frame.data) });
      if (stop(frames)) break;
    }
  } catch {
    // cancelled by the timeout: return what arrived
  } finally {
    clearTimeout(timer);
  }
  return frames;
}

/** A real HTTP peer on 127.0.0.1 (a webhook receiver, an OTLP collector): each request's body is read whole, then answered. */
export abstract class LocalReceiver {
  private readonly server: HttpServer;

  constructor() {
    this.server = createHttpServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => this.answer(request, Buffer.concat(chunks).toString("utf8"), response));
    });
  }

  protected abstract answer(request: IncomingMessage, body: string, response: ServerResponse): void;

  /** Listens on a free port; answers the base URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Waits until the tenant has counted at least `count` finished runs (`vigil_runs_total`, any outcome, on
 * GET /v1/metrics) and returns when it saw them. The counters are the TenantDO's own, fed by each run's report, so
 * reading them never touches an agent: a test proving an agent finished on its own (its alarms) waits on the real
 * condition instead of sleeping past a guessed deadline. The tenant event stream would not do: its replay hydrates
 * agent events from the agent itself, which activates it and runs the recovery that the alarm is meant to prove.
 */
export async function tenantRunsEnded(baseUrl: string, apiKey: string, count: number, timeoutMs: number): Promise<{ ended: number; seenAt: number }> {
  const deadline = Date.now() + timeoutMs;
  let ended = 0;
  while (Date.now() < deadline) {
    const res = await raw(`${baseUrl}/v1/metrics`, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(30_000) }).catch(() => null);
    if (res?.status === 200) {
      ended = res.text
        .split("\n")
        .filter((line) => line.startsWith("vigil_runs_total{"))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
      if (ended >= count) return { ended, seenAt: Date.now() };
    }
    // Well under the per-key Rate Limiting budget over the longest wait.
    await delay(1_000);
  }
  throw new Error(`the tenant counted ${ended} finished runs, not ${count}, within ${timeoutMs} ms`);
}

export { clearOfPeriodEdge } from "../support/period-edge";
