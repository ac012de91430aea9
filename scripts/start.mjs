#!/usr/bin/env node
// `npm start`: install if needed, generate local secrets, run `wrangler dev`, seed a demo tenant
// and agent once, print how to talk to it. Node builtins only — this runs before `npm ci`.
//
// Environment: PORT (default 8787); VIGIL_STATE_DIR (default .wrangler) holds state/ and demo.json.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDotenv } from "./dotenv.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PORT = Number(process.env.PORT || 8787);
const HOST = "127.0.0.1";
const BASE_URL = `http://${HOST}:${PORT}`;
const STATE_DIR = resolve(ROOT, process.env.VIGIL_STATE_DIR || ".wrangler");
const PERSIST_DIR = join(STATE_DIR, "state");
const DEMO_FILE = join(STATE_DIR, "demo.json");
const DEV_VARS = join(ROOT, ".dev.vars");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const HEALTH_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 8_000;
const tty = process.stdout.isTTY === true;
const paint = (code) => (text) => (tty && !process.env.NO_COLOR ? `\x1b[${code}m${text}\x1b[0m` : text);
const bold = paint("1");
const dim = paint("2");
const cyan = paint("36");
const red = paint("31");

let wrangler = null;
let wranglerPid;
let stopping = false;

main().catch((error) => {
  console.error(red(`✘ ${error instanceof Error ? error.message : String(error)}`));
  shutdown(1);
});

async function main() {
  checkNode();
  installIfNeeded();
  const secrets = ensureDevVars();
  if (!Number.isInteger(PORT) || PORT < 1 || PORT > 65535) throw new Error(`PORT must be a TCP port, got ${process.env.PORT}`);
  if (!(await portIsFree(PORT))) throw new Error(`port ${PORT} on ${HOST} is already in use — stop the other server or run PORT=<free port> npm start`);

  mkdirSync(PERSIST_DIR, { recursive: true });
  startWrangler();
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => shutdown(0, signal));
  await waitForHealth();
  const demo = await ensureCoach(await ensureDemo(secrets.VIGIL_ADMIN_TOKEN));
  await ensureVisitorApprovals(demo);
  printBanner(demo, await mintDemoWidgetToken(demo));
}

function checkNode() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 22 || (major === 22 && minor < 12)) throw new Error(`Node ${process.versions.node} is too old: Vigil needs Node >= 22.12 — run it as \`npm start\`, which brings a project-local Node when the system one is older`);
}

/** A fresh clone has no node_modules (and a pulled lockfile may want others): install exactly what the lockfile says. */
function installIfNeeded() {
  const reason = installReason();
  if (!reason) return;
  console.log(bold(`▸ Installing dependencies with npm ci (${reason}) — this takes a minute…`));
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: ROOT, stdio: "inherit", shell: process.platform === "win32" });
  if (result.status !== 0 || !existsSync(WRANGLER)) throw new Error("npm ci failed; fix the error above and run npm start again");
  console.log(bold("▸ Dependencies installed."));
}

/** Why node_modules does not match package-lock.json, or null when it does (direct dependencies only). */
function installReason() {
  if (!existsSync(WRANGLER)) return "first run: node_modules is missing";
  const installed = join(ROOT, "node_modules", ".package-lock.json");
  const lockfile = join(ROOT, "package-lock.json");
  if (!existsSync(installed) || !existsSync(lockfile)) return null;
  try {
    const wanted = JSON.parse(readFileSync(lockfile, "utf8")).packages ?? {};
    const have = JSON.parse(readFileSync(installed, "utf8")).packages ?? {};
    const direct = Object.keys(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).dependencies ?? {});
    const stale = direct.find((name) => wanted[`node_modules/${name}`]?.version !== have[`node_modules/${name}`]?.version);
    return stale ? `${stale} differs from package-lock.json` : null;
  } catch {
    return null;
  }
}

/** `.dev.vars` holds the local secrets; generated once with random values, never overwritten. */
function ensureDevVars() {
  const current = existsSync(DEV_VARS) ? parseDotenv(readFileSync(DEV_VARS, "utf8")) : {};
  const missing = [];
  if (!current.VIGIL_ADMIN_TOKEN) missing.push(["VIGIL_ADMIN_TOKEN", randomBytes(24).toString("base64url")]);
  if (!current.VIGIL_MASTER_KEY) missing.push(["VIGIL_MASTER_KEY", randomBytes(32).toString("base64")]);
  if (missing.length > 0) {
    const lines = missing.map(([key, value]) => `${key}=${value}\n`).join("");
    if (existsSync(DEV_VARS)) {
      const text = readFileSync(DEV_VARS, "utf8");
      appendFileSync(DEV_VARS, (text && !text.endsWith("\n") ? "\n" : "") + lines);
    } else {
      writeFileSync(DEV_VARS, `# Local secrets for wrangler dev (generated by npm start; not committed).\n${lines}`, { mode: 0o600 });
    }
    console.log(`▸ Generated ${missing.map(([key]) => key).join(" and ")} in .dev.vars`);
    for (const [key, value] of missing) current[key] = value;
  }
  return current;
}


function portIsFree(port) {
  return new Promise((resolvePort) => {
    const probe = createServer();
    probe.once("error", () => resolvePort(false));
    probe.listen(port, HOST, () => probe.close(() => resolvePort(true)));
  });
}

/** wrangler runs in its own process group so that stopping it takes workerd along. */
function startWrangler() {
  const args = [WRANGLER, "dev", "--ip", HOST, "--port", String(PORT), "--persist-to", PERSIST_DIR, "--show-interactive-dev-session=false", "--var", "VIGIL_MODE:local"];
  wrangler = spawn(process.execPath, args, {
    cwd: ROOT,
    detached: process.platform !== "win32",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  wranglerPid = wrangler.pid;
  relay(wrangler.stdout, process.stdout);
  relay(wrangler.stderr, process.stderr);
  wrangler.once("exit", (code, signal) => {
    wrangler = null;
    // workerd may linger a moment after wrangler itself: take the rest of the group down too.
    killGroup("SIGKILL");
    if (stopping) process.exit(process.exitCode ?? 0);
    console.error(red(`✘ wrangler dev exited unexpectedly (${signal ?? `code ${code}`}); see its output above`));
    process.exit(code || 1);
  });
}

/**
 * wrangler's output, quieter: no banner, telemetry notice, bindings table, offline `Request.cf`
 * warnings (this machine may have no internet) or health-check request logs. Everything else shows.
 */
function relay(from, to) {
  let pending = "";
  let skipping = null;
  from.setEncoding("utf8");
  from.on("data", (chunk) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
      if (skipping === "stack" && (/^\s+at\s/.test(plain) || /^Error: getaddrinfo|^\S*Error: .*(fetch|ENOTFOUND|EAI_AGAIN)/.test(plain))) continue;
      if (skipping === "table") {
        if (plain.trim() === "") skipping = null;
        continue;
      }
      skipping = null;
      if (/Request\.cf/.test(plain)) {
        skipping = "stack";
        continue;
      }
      if (/following bindings:/.test(plain)) {
        skipping = "table";
        continue;
      }
      if (
        plain.trim() === "" ||
        /⛅️ wrangler|^─+$|update available|telemetry|Using secrets defined in|Starting local server|Ready on|Reloading local server|Local server updated|\[custom build\]|changed, restarting build/.test(plain) ||
        /\/healthz\b/.test(plain) ||
        // Structured info lines (dispatch, wake delivery) are for log pipelines; warnings and errors still show.
        (!process.env.VIGIL_VERBOSE && /^\s*\{"level":"info"/.test(plain))
      ) {
        continue;
      }
      to.write(`${dim("[wrangler]")} ${line}\n`);
    }
  });
}

async function waitForHealth() {
  const started = Date.now();
  const say = (text) => (tty ? process.stdout.write(`\r\x1b[2K${text}`) : undefined);
  if (!tty) console.log(`▸ Starting the local server on ${BASE_URL} …`);
  for (;;) {
    if (!wrangler) throw new Error("wrangler dev stopped before it was ready");
    try {
      const response = await fetch(`${BASE_URL}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) {
        if (tty) say(`▸ Local server is up on ${BASE_URL} (${((Date.now() - started) / 1000).toFixed(1)}s)\n`);
        else console.log(`▸ Local server is up (${((Date.now() - started) / 1000).toFixed(1)}s)`);
        return;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() - started > HEALTH_TIMEOUT_MS) throw new Error(`the server did not answer ${BASE_URL}/healthz within ${HEALTH_TIMEOUT_MS / 1000}s`);
    say(`▸ Starting the local server on ${BASE_URL} … ${Math.floor((Date.now() - started) / 1000)}s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The demo tenant and agent are created once; a demo file whose key no longer works is reseeded. */
async function ensureDemo(adminToken) {
  const existing = readDemo();
  if (existing) {
    const check = await fetch(`${BASE_URL}/v1/agents/${encodeURIComponent(existing.agentId)}`, { headers: { authorization: `Bearer ${existing.apiKey}` } });
    if (check.ok) {
      console.log(`▸ Using the demo tenant from ${rel(DEMO_FILE)}`);
      return existing;
    }
    if (check.status !== 401 && check.status !== 404) throw new Error(`checking the demo agent failed: HTTP ${check.status} ${await check.text()}`);
    console.log(`▸ The demo in ${rel(DEMO_FILE)} no longer exists on this server (state reset?) — seeding it again`);
  }
  const tenant = await call("POST", "/v1/tenants", adminToken, { name: "Demo" }, 201);
  const agent = await call(
    "POST",
    "/v1/agents",
    tenant.apiKey,
    { kind: "demo", displayName: "Demo agent", model: "builtin:echo", modelOptions: { chunkDelayMs: 40 } },
    201,
  );
  const demo = { tenantId: tenant.tenant.id, apiKey: tenant.apiKey, agentId: agent.id, createdAt: new Date().toISOString() };
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(DEMO_FILE, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  console.log(`▸ Seeded the demo tenant "Demo" and its agent "Demo agent" (${rel(DEMO_FILE)})`);
  return demo;
}

/** The widget token's subject for the demo page; its conversation is where the coach's wakes run. */
const DEMO_VISITOR = "demo-visitor";
const COACH_CATEGORY = "Demo";
/** The coach's write the demo visitor approves. */
const COACH_APPROVABLE_TOOL = "create_follow_up_task";

/**
 * The demo coach (builtin:playbook) is seeded once, also into an existing demo.json that predates it:
 * a journal category "Demo", and a coach subscribed to TASK changes there whose wakes join the demo
 * visitor's conversation. On such a wake it keeps the task's title in its primaryGoal slot and proposes
 * a follow-up task — a medium-risk write that, under the default adaptive control mode with the starting
 * trust of 50, waits for a person's approval: the Approve button in /demo.
 */
async function ensureCoach(demo) {
  if (demo.coachAgentId) {
    const check = await fetch(`${BASE_URL}/v1/agents/${encodeURIComponent(demo.coachAgentId)}`, { headers: { authorization: `Bearer ${demo.apiKey}` } });
    if (check.ok) return demo;
    if (check.status !== 404) throw new Error(`checking the demo coach failed: HTTP ${check.status} ${await check.text()}`);
  }
  const category = await call("POST", "/v1/journal/categories", demo.apiKey, { name: COACH_CATEGORY }, 201);
  // The wake's observation lists the task that matched the predicate first.
  const title = "{{observation.entities.0.fields.title}}";
  const taskId = "{{observation.entities.0.id}}";
  const coach = await call(
    "POST",
    "/v1/agents",
    demo.apiKey,
    {
      kind: "coach",
      displayName: "Demo coach",
      model: "builtin:playbook",
      modelOptions: { chunkDelayMs: 30 },
      allowedCategoryIds: [category.id],
      subscriptions: [
        {
          tokens: [{ tokenClass: "semanticKey", tokenValue: "TASK" }],
          predicate: { eq: ["task.categoryId", category.id] },
          sessionId: widgetSessionId(DEMO_VISITOR),
        },
      ],
      playbook: {
        rules: [
          {
            when: { reason: "subscription" },
            tools: [
              { name: "memory_update_slot", args: { slot: "primaryGoal", value: title } },
              { name: "create_follow_up_task", args: { sourceTaskId: taskId, newTaskTitle: `Follow up: ${title}` } },
            ],
            reply: `Noted “${title}” as your goal. Follow-up task created: {{results.1.ok}}.`,
          },
          {
            when: {},
            reply: `I am the demo coach. Add a task to the journal category “${COACH_CATEGORY}” (the curl line npm start printed): I will keep it as your goal and ask here before I create a follow-up task.`,
          },
        ],
      },
    },
    201,
  );
  const next = { ...demo, coachAgentId: coach.id, coachCategoryId: category.id };
  writeFileSync(DEMO_FILE, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  console.log(`▸ Seeded the agent "Demo coach" and the journal category "${COACH_CATEGORY}" (${rel(DEMO_FILE)})`);
  return next;
}

/**
 * The demo visitor approves the coach's follow-up task in /demo: a visitor (widget token) answers an approval only for
 * a tool the tenant's policy lists in `visitorApprovableTools` (operators answer every decision). Read-modify-write,
 * so a policy the operator changed keeps everything else.
 */
async function ensureVisitorApprovals(demo) {
  const response = await fetch(`${BASE_URL}/v1/policy`, { headers: { authorization: `Bearer ${demo.apiKey}` } });
  if (!response.ok) throw new Error(`reading the demo policy failed: HTTP ${response.status} ${await response.text()}`);
  const { version, updatedAt: _updatedAt, ...policy } = await response.json();
  const tools = policy.visitorApprovableTools ?? [];
  if (tools.includes(COACH_APPROVABLE_TOOL)) return;
  const put = await fetch(`${BASE_URL}/v1/policy`, {
    method: "PUT",
    headers: { authorization: `Bearer ${demo.apiKey}`, "content-type": "application/json", "if-match": String(version) },
    body: JSON.stringify({ ...policy, visitorApprovableTools: [...tools, COACH_APPROVABLE_TOOL] }),
  });
  if (!put.ok) throw new Error(`PUT /v1/policy for the demo coach failed: HTTP ${put.status} ${await put.text()}`);
}

/** src/core/runtime/widget-session.ts `widgetSessionId(sub)`: `w-` + 24 hex of H("widget-session", sub); the subject has no `|` or backslash to escape. */
function widgetSessionId(subject) {
  return `w-${createHash("sha256").update(`v1|widget-session|${subject}`).digest("hex").slice(0, 24)}`;
}

function readDemo() {
  if (!existsSync(DEMO_FILE)) return null;
  try {
    const demo = JSON.parse(readFileSync(DEMO_FILE, "utf8"));
    return typeof demo.apiKey === "string" && typeof demo.agentId === "string" && typeof demo.tenantId === "string" ? demo : null;
  } catch {
    return null;
  }
}

async function call(method, path, token, body, expected) {
  const response = await fetch(`${BASE_URL}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path} → HTTP ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** A fresh widget JWT (the longest allowed, 1 h) for the demo page; null if minting fails (the rest still works). */
async function mintDemoWidgetToken({ apiKey, agentId, coachAgentId }) {
  try {
    const minted = await call("POST", "/v1/tokens", apiKey, { sub: DEMO_VISITOR, agents: [agentId, coachAgentId], ttlSeconds: 3600 }, 201);
    return minted.token;
  } catch (error) {
    console.error(red(`✘ could not mint a widget token for the demo page: ${error instanceof Error ? error.message : String(error)}`));
    return null;
  }
}

function printBanner({ apiKey, agentId, coachAgentId, coachCategoryId }, widgetToken) {
  const auth = `-H 'authorization: Bearer ${apiKey}'`;
  const json = `-H 'content-type: application/json'`;
  const messages = `${BASE_URL}/v1/agents/${agentId}/messages`;
  const lines = [
    "",
    bold(`  Vigil is running at ${cyan(BASE_URL)}`),
    "",
    `  API key   ${bold(apiKey)}`,
    `  Agent     ${bold(agentId)}  ${dim('("Demo agent", model builtin:echo — offline)')}`,
    `  Operator  VIGIL_ADMIN_TOKEN in .dev.vars · state in ${rel(PERSIST_DIR)}`,
    "",
    `  Operator console ${dim("(agents, runs, decisions, memory, wakes, usage, brakes)")}:`,
    `    ${cyan(`${BASE_URL}/console`)}`,
    `  Paste this API key into its "API key" field to sign in:`,
    `    ${apiKey}`,
    "",
    ...(widgetToken
      ? [
          `  Chat with the agent in your browser ${dim("(the link holds a widget token valid for 1 h; restart npm start for a new one)")}:`,
          `    ${cyan(`${BASE_URL}/demo#agent=${agentId}&token=${widgetToken}`)}`,
          "",
        ]
      : []),
    `  See the demo coach ${dim("(builtin:playbook)")} wake on a journal change, keep a memory slot and ask before it writes:`,
    `    curl -s -X POST ${BASE_URL}/v1/journal/tasks ${auth} ${json} -d '{"title":"Run 5k","categoryId":"${coachCategoryId}"}'`,
    ...(widgetToken ? [`    ${cyan(`${BASE_URL}/demo#agent=${coachAgentId}&token=${widgetToken}&heading=Demo%20coach`)}  ${dim("← Approve the follow-up task here")}`] : []),
    "",
    `  Send a message:`,
    `    curl -s -X POST ${messages} ${auth} ${json} -d '{"text":"hello"}'`,
    "",
    `  Stream a reply:`,
    `    curl -N -X POST ${messages} ${auth} ${json} -H 'accept: text/event-stream' -d '{"text":"stream me a reply"}'`,
    "",
    `  Follow the event stream (replay, then live; add -H 'last-event-id: N' to resume):`,
    `    curl -N ${BASE_URL}/v1/agents/${agentId}/events ${auth}`,
    "",
    `  Read the conversation:`,
    `    curl -s ${messages} ${auth}`,
    "",
    dim(`  Ctrl-C stops the server. Delete ${rel(PERSIST_DIR)} to start from scratch.`),
    "",
  ];
  console.log(lines.join("\n"));
}

function rel(path) {
  return relative(process.cwd(), path) || ".";
}

/** Stops wrangler's whole process group: SIGINT first (clean shutdown), SIGKILL after a grace period. */
function shutdown(code, signal) {
  if (stopping) {
    if (signal) killGroup("SIGKILL");
    return;
  }
  stopping = true;
  if (!wrangler) process.exit(code);
  if (signal) console.log("\n▸ Stopping the local server…");
  process.exitCode = code;
  killGroup("SIGINT");
  setTimeout(() => {
    killGroup("SIGKILL");
    process.exit(code);
  }, STOP_GRACE_MS).unref();
}

function killGroup(signal) {
  if (wranglerPid === undefined) return;
  try {
    if (process.platform === "win32") process.kill(wranglerPid, signal);
    else process.kill(-wranglerPid, signal);
  } catch {
    // already gone
  }
}

process.on("exit", () => killGroup("SIGKILL"));
