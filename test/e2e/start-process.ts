import { spawn, type ChildProcess } from "node:child_process";
import { delay } from "./harness";

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
