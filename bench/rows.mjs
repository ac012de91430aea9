// Rows per unit of work, counted across the agent's and the tenant's objects:
//  - rows stored: rows each table gained (FTS shadow tables included, the FTS virtual table itself not: it re-reads
//    the content table), and the SQLite file's growth in bytes;
//  - billed rows: the SQL cursors' rowsWritten / rowsRead (every index entry and FTS shadow row counts), summed by the
//    bench-only statement meter (src/objects/shared/seams/statement-meter.ts) and charged to the table each statement
//    writes (else the first it reads).
// Units: a plain chat turn (builtin echo, no tools), a wake (a journal write matching one agent's subscription, the
// agent's run to its end) and a tool turn (builtin:playbook calling create_task once).
import { readFileSync } from "node:fs";
import { streamingTurn } from "./lean.mjs";
import { openSse } from "./lib/client.mjs";
import { fmt, table } from "./lib/stats.mjs";

export const defaults = {
  /** Units per kind between the two snapshots (after warm-up, so the objects are in steady state). */
  units: 100,
  warmup: 5,
  /** The user's text per chat turn (~200 bytes, as in the 200-byte echo exchange). */
  textBytes: 200,
  unitTimeoutMs: 15_000,
};

/** The figures recorded at 0483164, before the rows were reduced (committed beside this file). */
function baseline() {
  try {
    return JSON.parse(readFileSync(new URL("./baseline-0483164-rows.json", import.meta.url), "utf8")).summary;
  } catch {
    return null;
  }
}

/** The goals: rows stored and bytes over the text per chat turn; billed rows written at most half the baseline's. */
export const GOALS = { chatRowsStored: 8, chatOverheadBytes: 2048, baselineChatRowsWritten: baseline()?.chatRowsWritten ?? null };

const sample = (bytes, i) => `turn ${i}: `.concat("lorem ipsum dolor sit amet ".repeat(Math.ceil(bytes / 27))).slice(0, bytes);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function snapshot(client, agentId) {
  const tenant = (await client.call("POST", "/__bench/tenant/alertness", { op: "storage" }, { expect: [200] })).body;
  const agent = (await client.call("POST", `/__bench/agents/${agentId}/op`, { op: "storage" }, { expect: [200] })).body.footprint;
  return { tenant, agent };
}

/** Snapshots until the row counts stop moving (a run's report to the tenant lands after its last frame). */
async function settle(client, agentId) {
  let last = null;
  let reads = 0;
  for (;;) {
    const now = await snapshot(client, agentId);
    reads++;
    const key = JSON.stringify([now.tenant.rows, now.agent.rows]);
    if (key === last || reads >= 30) return { snap: now, reads };
    last = key;
    await sleep(300);
  }
}

const diff = (before = {}, after = {}) => {
  const out = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const d = (after[key] ?? 0) - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
};

/** Billed rows by table between two footprints, less `noise` (what `reads` footprint reads themselves cost). */
function billedDelta(before, after, noise, reads) {
  if (!before.billed || !after.billed) return null;
  const byTable = {};
  for (const name of new Set([...Object.keys(before.billed.byTable), ...Object.keys(after.billed.byTable)])) {
    const row = {};
    for (const key of ["statements", "rowsRead", "rowsWritten"]) {
      const d = (after.billed.byTable[name]?.[key] ?? 0) - (before.billed.byTable[name]?.[key] ?? 0) - (noise?.[name]?.[key] ?? 0) * reads;
      row[key] = d;
    }
    if (row.statements || row.rowsRead || row.rowsWritten) byTable[name] = row;
  }
  return byTable;
}

/** One object's per-unit figures between two footprints. */
function perUnit(before, after, units, noise, reads) {
  const stored = diff(before.rows, after.rows);
  for (const name of after.virtual ?? []) delete stored[name];
  const billed = billedDelta(before, after, noise, reads) ?? {};
  const per = (record) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === "number" ? v / units : Object.fromEntries(Object.entries(v).map(([a, b]) => [a, b / units]))]));
  const total = (key) => Object.values(billed).reduce((sum, row) => sum + row[key], 0) / units;
  return {
    rowsStored: Object.values(stored).reduce((a, b) => a + b, 0) / units,
    bytes: (after.bytes - before.bytes) / units,
    rowsWritten: total("rowsWritten"),
    rowsRead: total("rowsRead"),
    statements: total("statements"),
    rowsStoredByTable: per(stored),
    billedByTable: per(billed),
  };
}

/** What one footprint read costs each object, per table (the route's auth reads, the RPC's own statements). */
async function footprintNoise(client, agentId) {
  const a = await snapshot(client, agentId);
  await snapshot(client, agentId);
  const c = await snapshot(client, agentId);
  const half = (record) => Object.fromEntries(Object.entries(record ?? {}).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([x, y]) => [x, y / 2]))]));
  return { tenant: half(billedDelta(a.tenant, c.tenant, null, 0)), agent: half(billedDelta(a.agent, c.agent, null, 0)) };
}

/** Measures `units` runs of `unit(i)` on one agent: both objects' per-unit figures. */
async function measure(client, agentId, { units, warmup }, unit, textOf) {
  for (let i = 0; i < warmup; i++) await unit(`w${i}`);
  const noise = await footprintNoise(client, agentId);
  const { snap: before } = await settle(client, agentId);
  let textBytes = 0;
  for (let i = 0; i < units; i++) textBytes += (await unit(i)) ?? 0;
  const { snap: after, reads } = await settle(client, agentId);
  const agent = perUnit(before.agent, after.agent, units, noise.agent, reads);
  const tenant = perUnit(before.tenant, after.tenant, units, noise.tenant, reads);
  const all = {
    rowsStored: agent.rowsStored + tenant.rowsStored,
    bytes: agent.bytes + tenant.bytes,
    textBytes: textOf ? textBytes / units : null,
    rowsWritten: agent.rowsWritten + tenant.rowsWritten,
    rowsRead: agent.rowsRead + tenant.rowsRead,
    statements: agent.statements + tenant.statements,
  };
  all.overheadBytes = all.textBytes === null ? null : all.bytes - all.textBytes;
  return { all, agent, tenant };
}

/** Waits for `count` terminal run frames on an agent's SSE stream. */
function terminalCounter(client, agentId) {
  let seen = 0;
  const waiters = [];
  const sse = openSse(`${client.baseUrl}/v1/agents/${agentId}/events`, client.token, (frame) => {
    if (frame.event !== "run.completed" && frame.event !== "run.failed") return;
    seen++;
    for (const w of waiters.splice(0)) w();
  });
  return {
    ready: sse.ready,
    close: () => sse.close(),
    async waitFor(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (seen < count) {
        if (Date.now() > deadline) throw new Error(`wake: ${seen}/${count} runs terminal after ${timeoutMs} ms`);
        await Promise.race([new Promise((resolve) => waiters.push(resolve)), sleep(250)]);
      }
    },
    get seen() {
      return seen;
    },
  };
}

export async function runRowsBench({ client, log, params: overrides = {} }) {
  const params = { ...defaults, ...overrides };
  const { textBytes, unitTimeoutMs } = params;
  const turn = async (agentId, text) => void (await streamingTurn(client, agentId, text, unitTimeoutMs));

  // ---------------------------------------------------------------- a plain chat turn (builtin echo, no tools)
  const { body: chatAgent } = await client.call("POST", "/v1/agents", { kind: "bench-rows", displayName: "bench rows chat" });
  const chat = await measure(client, chatAgent.id, params, async (i) => {
    const text = sample(textBytes, typeof i === "number" ? i : 0);
    await turn(chatAgent.id, text);
    return Buffer.byteLength(text) + Buffer.byteLength(`echo: ${text}`); // the builtin echo's reply
  }, true);
  log(`  chat turn: ${fmt(chat.all.rowsStored, 2)} rows stored, ${fmt(chat.all.bytes, 0)} B, ${fmt(chat.all.rowsWritten, 1)} rows written, ${fmt(chat.all.rowsRead, 1)} read`);

  // ---------------------------------------------------------------- a wake (journal write → one subscribed agent's run)
  const { body: category } = await client.call("POST", "/v1/journal/categories", { name: "bench rows" });
  const { body: wakeAgent } = await client.call("POST", "/v1/agents", { kind: "bench-rows", displayName: "bench rows wake" });
  await client.call("POST", `/v1/agents/${wakeAgent.id}/subscriptions`, { tokens: [{ tokenClass: "semanticKey", tokenValue: "TASK" }], predicate: { eq: ["task.categoryId", category.id] } });
  const terminals = terminalCounter(client, wakeAgent.id);
  await terminals.ready;
  let wakes = 0;
  const wake = await measure(client, wakeAgent.id, params, async (i) => {
    wakes++;
    await client.call("POST", "/v1/journal/tasks", { title: `bench wake ${i}`, categoryId: category.id });
    await terminals.waitFor(wakes, unitTimeoutMs);
  }, false);
  terminals.close();
  log(`  wake: ${fmt(wake.all.rowsStored, 2)} rows stored, ${fmt(wake.all.bytes, 0)} B, ${fmt(wake.all.rowsWritten, 1)} rows written, ${fmt(wake.all.rowsRead, 1)} read`);

  // ---------------------------------------------------------------- a tool turn (playbook → create_task once)
  const { body: toolAgent } = await client.call("POST", "/v1/agents", {
    kind: "coach", // a kind whose profile holds taskWrite: create_task must pass the capability gate
    displayName: "bench rows tool",
    model: "builtin:playbook",
    allowedCategoryIds: [category.id],
    playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "done: {{results.0.output.task.title}}" }] },
  });
  const tool = await measure(client, toolAgent.id, params, async (i) => {
    await turn(toolAgent.id, `/tool create_task {"title":"bench tool ${i}","categoryId":"${category.id}"}`);
  }, false);
  log(`  tool turn: ${fmt(tool.all.rowsStored, 2)} rows stored, ${fmt(tool.all.bytes, 0)} B, ${fmt(tool.all.rowsWritten, 1)} rows written, ${fmt(tool.all.rowsRead, 1)} read`);

  return report(params, { chat, wake, tool });
}

function report(params, results) {
  const { chat } = results;
  const baseline = GOALS.baselineChatRowsWritten;
  const goals = [
    { measure: "rows stored per chat turn", value: chat.all.rowsStored, goal: `≤ ${GOALS.chatRowsStored}`, pass: chat.all.rowsStored <= GOALS.chatRowsStored },
    { measure: "bytes per chat turn over the text", value: chat.all.overheadBytes, goal: `≤ ${GOALS.chatOverheadBytes} B`, pass: chat.all.overheadBytes <= GOALS.chatOverheadBytes },
    { measure: "billed rows written per chat turn", value: chat.all.rowsWritten, goal: baseline === null ? "≤ ½ baseline (unset)" : `≤ ${fmt(baseline / 2, 1)} (½ of ${fmt(baseline, 1)} at 0483164)`, pass: baseline === null ? null : chat.all.rowsWritten <= baseline / 2 },
  ];
  const line = (name, r) => [name, fmt(r.all.rowsStored, 2), fmt(r.all.bytes, 0), r.all.textBytes === null ? "" : fmt(r.all.textBytes, 0), fmt(r.all.rowsWritten, 1), fmt(r.all.rowsRead, 1), fmt(r.all.statements, 1)];
  const byTable = (name, r) =>
    ["agent", "tenant"].flatMap((object) => {
      const o = r[object];
      const names = [...new Set([...Object.keys(o.rowsStoredByTable), ...Object.keys(o.billedByTable)])].sort();
      return names.map((t) => [`${name} ${object}`, t, fmt(o.rowsStoredByTable[t] ?? 0, 2), fmt(o.billedByTable[t]?.rowsWritten ?? 0, 2), fmt(o.billedByTable[t]?.rowsRead ?? 0, 1), fmt(o.billedByTable[t]?.statements ?? 0, 2)]);
    });
  const text = [
    `Rows per unit of work, agent + tenant objects (${params.units} units each after ${params.warmup} warm-up; billed = SQL cursor rowsWritten / rowsRead)`,
    table(["unit", "rows stored", "bytes", "text B", "rows written", "rows read", "statements"], [line("chat turn", results.chat), line("wake", results.wake), line("tool turn", results.tool)]),
    "",
    "By table (stored rows; billed rows written/read and statements charged to the table a statement writes, else reads)",
    table(["unit object", "table", "stored", "written", "read", "statements"], [...byTable("chat", results.chat), ...byTable("wake", results.wake), ...byTable("tool", results.tool)]),
    "",
    table(["goal", "value", "bound", "verdict"], goals.map((g) => [g.measure, fmt(g.value, 2), g.goal, g.pass === null ? "info" : g.pass ? "PASS" : "FAIL"])),
  ].join("\n");
  return {
    name: "rows",
    parameters: params,
    method:
      "per unit = (footprint after − footprint before) / units, each footprint read after the row counts stopped moving; rows stored = rows each table gained (FTS shadow tables included, the FTS virtual table left out), bytes = growth of ctx.storage.sql.databaseSize; billed rows = sum of every sql.exec cursor's rowsWritten / rowsRead (bench-only meter, ours and the Agents SDK's statements), net of what the bench's own footprint requests cost (measured with nothing in between); KV (ctx.storage.put) writes are not in the meter; a tool turn's Workflow instance stores in the Workflows engine, not in these objects",
    results,
    goals,
    summary: { chatRowsStored: chat.all.rowsStored, chatOverheadBytes: chat.all.overheadBytes, chatRowsWritten: chat.all.rowsWritten, chatRowsRead: chat.all.rowsRead, wakeRowsWritten: results.wake.all.rowsWritten, toolTurnRowsWritten: results.tool.all.rowsWritten },
    text,
  };
}
