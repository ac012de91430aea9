import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { delay, REPO_ROOT } from "./harness";

/** `scripts/start.mjs` (what `npm start` runs) as a child process of the test, its output collected. */
export interface StartedScript {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export function startScript(checkout: string, port: number, env: Record<string, string> = {}): StartedScript {
  const child = spawn(process.execPath, ["scripts/start.mjs"], {
    cwd: checkout,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PORT: String(port), NO_COLOR: "1", ...env },
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The whole banner, once the script has printed its last line. */
export async function waitForBanner(started: StartedScript, timeoutMs = 90_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void started.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (started.output().includes("Ctrl-C stops the server")) return started.output();
    if (exited) throw new Error(`start.mjs exited early:\n${started.output()}`);
    await delay(100);
  }
  throw new Error(`no banner within ${timeoutMs} ms:\n${started.output()}`);
}

/** Ctrl-C: SIGINT to the script; it must stop wrangler and workerd and exit. */
export async function interrupt(started: StartedScript): Promise<number | null> {
  started.child.kill("SIGINT");
  const code = await Promise.race([started.exited, delay(20_000).then(() => "timeout" as const)]);
  if (code === "timeout") throw new Error(`start.mjs did not stop on SIGINT:\n${started.output()}`);
  return code;
}

/**
 * The snapshot links the repo's node_modules, and start.mjs runs `npm ci` when the installed direct dependencies
 * differ from package-lock.json: through the link, that would empty the node_modules every other test process of
 * the run is using (it happened on a checkout mid-upgrade). The same check as start.mjs's, made first by the files that
 * run it (start-script, demo-coach), fails them clearly instead. A clean clone after `npm ci` (CI) always passes it.
 */
export function refuseStaleNodeModules(): void {
  const read = (path: string) => JSON.parse(readFileSync(join(REPO_ROOT, path), "utf8"));
  if (!existsSync(join(REPO_ROOT, "node_modules", ".package-lock.json"))) return;
  const wanted = read("package-lock.json").packages ?? {};
  const have = read("node_modules/.package-lock.json").packages ?? {};
  const stale = Object.keys(read("package.json").dependencies ?? {}).filter((name) => wanted[`node_modules/${name}`]?.version !== have[`node_modules/${name}`]?.version);
  if (stale.length > 0) throw new Error(`node_modules does not match package-lock.json (${stale.join(", ")}): run npm ci first, or start.mjs would reinstall through the snapshot's linked node_modules`);
}
