// (issue 12) The lean hot path, measured side by side in one run:
//  - streaming turn (POST …/messages, Accept: text/event-stream, until its run.completed frame) vs an
//    empty Worker request (GET /healthz), interleaved;
//  - the same streaming turn on an agent with 100 events vs one with 100 000 events, interleaved;
//  - bytes and rows stored per chat turn across the agent's and the tenant's objects (steady state);
//  - TenantDO calls per chat turn and per tool call, from GET /v1/metrics `vigil_do_calls_total`
//    when the runtime exposes it ("n/a" when it does not).
import { fmt, percentile, summarize, table } from "./lib/stats.mjs";
import { countCommits } from "./lib/commits.mjs";

export const defaults = {
  /** Streaming turns per agent (young and aged, interleaved), each paired with one empty request. */
  streamingTurns: 100,
  warmupTurns: 10,
  youngEvents: 100,
  agedEvents: 100_000,
  /** Chat turns between the two storage snapshots (after warm-up turns, so the objects are in steady state). */
  storageTurns: 200,
  /** The user's text per turn: ~200 bytes, as in the issue's "200-byte echo exchange". */
  textBytes: 200,
  /** Tool turns (playbook agent calling create_task once per turn) for TenantDO calls per tool call. */
  toolTurns: 40,
  /** A turn that has not ended after this long is a harness failure. */
  turnTimeoutMs: 15_000,
  /**
   * Quiet time before each timed request of the streaming comparison, so that work a request leaves behind (a run's
   * report to the tenant goes after its last frame) is not timed as part of the next one, whichever that is
   * (docs/decisions.md "Lean bench: timed requests one at a time (session 13, lead)").
   */
  quietMs: 20,
};

const sample = (bytes, i) => `turn ${i}: `.concat("lorem ipsum dolor sit amet ".repeat(Math.ceil(bytes / 27))).slice(0, bytes);

/**
 * One streaming turn: send → the run.completed frame arrives (what the user waits for); `endMs` is when
 * the response body ended (the stream closes right after run.completed).
 */
export async function streamingTurn(client, agentId, text, timeoutMs) {
  const started = performance.now();
  const res = await fetch(`${client.baseUrl}/v1/agents/${agentId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${client.token}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ text }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (res.status !== 200) throw new Error(`streaming turn → HTTP ${res.status}: ${(await res.text()).slice(0, 500)}`);
  const decoder = new TextDecoder();
  let body = "";
  let terminalAt = null;
  let firstByteAt = null;
  for await (const chunk of res.body) {
    firstByteAt ??= performance.now();
    body += decoder.decode(chunk, { stream: true });
    if (terminalAt === null && /event: (run\.completed|run\.failed)\n[^]*?\n\n/.test(body)) terminalAt = performance.now();
  }
  const endAt = performance.now();
  const terminal = /event: (run\.completed|run\.failed)\n/.exec(body)?.[1] ?? "none";
  if (terminal !== "run.completed") throw new Error(`streaming turn ended without run.completed (${terminal}): ${body.slice(-500)}`);
  return { ms: terminalAt - started, firstByteMs: firstByteAt - started, endMs: endAt - started };
}

async function footprint(client, agentIds) {
  const tenant = (await client.call("POST", "/__bench/tenant/alertness", { op: "storage" }, { expect: [200] })).body;
  const agents = [];
  for (const id of agentIds) agents.push((await client.call("POST", `/__bench/agents/${id}/op`, { op: "storage" }, { expect: [200] })).body.footprint);
  return { tenant: { bytes: tenant.bytes, rows: tenant.rows, payload: tenant.payload, statements: tenant.statements }, agents };
}

const statementsPerTurn = (before, after, turns) => (typeof before.statements === "number" && typeof after.statements === "number" ? (after.statements - before.statements) / turns : null);
const sumRows = (rows) => Object.values(rows).reduce((a, b) => a + b, 0);

/**
 * Tables that are pruned (issue 12 §5: src/objects/agent/events/retention.ts, src/objects/tenant/retention.ts). In steady
 * state, past their window, they are deleted as fast as turns write them, so what a turn *keeps* is the rest: history
 * (messages and their index, runs and their traces, summaries, audit, reports). See docs/decisions.md "Bytes per turn".
 */
const RETENTION_BOUND = new Set(["events", "compaction_jobs", "tenant_events", "change_units", "notification_batches", "inbound_deliveries", "idempotency", "webhook_deliveries"]);

/**
 * Splits one object's file growth into what is kept and what is retention-bound, in proportion to the payload (columns
 * and index keys) each table gained: DO SQLite exposes no per-table page counts (no dbstat, no PRAGMA page_count).
 */
function keptShare(growthBytes, payloadPerTurn) {
  let kept = 0;
  let bounded = 0;
  for (const [table, bytes] of Object.entries(payloadPerTurn)) {
    if (RETENTION_BOUND.has(table)) bounded += bytes;
    else kept += bytes;
  }
  const total = kept + bounded;
  const share = total > 0 ? kept / total : 1;
  return { kept: growthBytes * share, bounded: growthBytes * (1 - share), keptPayload: kept, boundedPayload: bounded };
}
function rowDelta(before, after) {
  const out = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const d = (after[key] ?? 0) - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

/** Sum of `vigil_do_calls_total{object="tenant",…}` (and per method), or null when the metric is absent. */
async function tenantDoCalls(client) {
  const res = await fetch(`${client.baseUrl}/v1/metrics`, { headers: { authorization: `Bearer ${client.token}` } });
  const text = await res.text();
  if (res.status !== 200 || !text.includes("vigil_do_calls_total")) return null;
  const byMethod = {};
  let total = 0;
  for (const line of text.split("\n")) {
    const m = /^vigil_do_calls_total\{([^}]*)\}\s+([0-9.eE+-]+)/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (labels.object !== "tenant") continue;
    const value = Number(m[2]);
    total += value;
    byMethod[labels.method ?? "?"] = (byMethod[labels.method ?? "?"] ?? 0) + value;
  }
  return { total, byMethod };
}

/** TenantDO calls per unit of `work()` (n units), net of the metrics reads themselves; null without the metric. */
async function callsPer(client, n, work) {
  const a = await tenantDoCalls(client);
  if (!a) {
    await work();
    return null;
  }
  const b = await tenantDoCalls(client); // nothing between a and b: what one metrics read costs
  await work();
  await new Promise((r) => setTimeout(r, 500)); // let the runs' background calls (forwarding, outcome) land
  const c = await tenantDoCalls(client);
  const readCost = b.total - a.total;
  const methods = {};
  for (const key of new Set([...Object.keys(b.byMethod), ...Object.keys(c.byMethod)])) {
    const d = (c.byMethod[key] ?? 0) - (b.byMethod[key] ?? 0) - ((b.byMethod[key] ?? 0) - (a.byMethod[key] ?? 0));
    if (d > 0) methods[key] = d / n;
  }
  return { perUnit: (c.total - b.total - readCost) / n, byMethod: methods };
}

/** Waits until the tenant's row counts stop moving (background forwarding/outcome calls have landed). */
async function settle(client, agentIds) {
  let last = null;
  for (let i = 0; i < 20; i++) {
    const now = await footprint(client, agentIds);
    const key = JSON.stringify([now.tenant.rows, now.agents.map((a) => a.rows)]);
    if (key === last) return now;
    last = key;
    await new Promise((r) => setTimeout(r, 300));
  }
  return footprint(client, agentIds);
}

export async function runLeanBench({ client, log, params: overrides = {}, server = null }) {
  const params = { ...defaults, ...overrides };
  const { streamingTurns, warmupTurns, youngEvents, agedEvents, storageTurns, textBytes, toolTurns, turnTimeoutMs, quietMs } = params;
  const quiet = () => new Promise((resolve) => setTimeout(resolve, quietMs));
  const turnTimed = (agentId, text) => streamingTurn(client, agentId, text, turnTimeoutMs);
  const turn = async (agentId, text) => (await turnTimed(agentId, text)).ms;
  const firstByteMs = [];
  const endMs = [];
  const emptyRequest = async () => (await client.call("GET", "/healthz", undefined, { expect: [200] })).ms;

  // ---------------------------------------------------------------- streaming turn vs empty request; young vs aged
  const { body: young } = await client.call("POST", "/v1/agents", { kind: "bench-lean", displayName: "bench young" });
  const { body: aged } = await client.call("POST", "/v1/agents", { kind: "bench-lean", displayName: "bench aged" });
  for (const [agent, count] of [[young, youngEvents], [aged, agedEvents]]) {
    for (let left = count; left > 0; left -= 50_000) await client.benchOp(agent.id, { op: "seedEvents", count: Math.min(50_000, left) });
  }
  log(`  agents seeded with ${young ? youngEvents : 0} and ${agedEvents} events; warm-up ${warmupTurns} turns each`);
  for (let i = 0; i < warmupTurns; i++) {
    await turn(young.id, `warm-up ${i}`);
    await turn(aged.id, `warm-up ${i}`);
    await emptyRequest();
  }
  const youngMs = [];
  const agedMs = [];
  const emptyMs = [];
  const pairRatios = [];
  for (let i = 0; i < streamingTurns; i++) {
    await quiet();
    emptyMs.push(await emptyRequest());
    // Alternate which agent goes first, so drift and warm caches favour neither.
    const order = i % 2 ? [[aged, agedMs], [young, youngMs]] : [[young, youngMs], [aged, agedMs]];
    for (const [agent, into] of order) {
      await quiet();
      const t = await turnTimed(agent.id, `hello ${i}`);
      into.push(t.ms);
      if (agent === young) {
        firstByteMs.push(t.firstByteMs);
        endMs.push(t.endMs);
      }
    }
    pairRatios.push(agedMs.at(-1) / youngMs.at(-1));
    if ((i + 1) % 50 === 0) log(`  streaming turns ${i + 1}/${streamingTurns}: p50 young ${fmt(percentile(youngMs, 50), 2)} ms, aged ${fmt(percentile(agedMs, 50), 2)} ms, empty ${fmt(percentile(emptyMs, 50), 2)} ms`);
  }
  const streaming = { young: summarize(youngMs), aged: summarize(agedMs), empty: summarize(emptyMs), youngFirstByte: summarize(firstByteMs), youngBodyEnd: summarize(endMs) };
  const streamingRatios = {
    turnP50VsEmptyRequestP50: streaming.young.p50 / streaming.empty.p50,
    agedVsYoungP50: streaming.aged.p50 / streaming.young.p50,
    agedVsYoungPairedMedian: percentile(pairRatios, 50),
  };

  // ---------------------------------------------------------------- bytes and rows per chat turn (steady state)
  const { body: chat } = await client.call("POST", "/v1/agents", { kind: "bench-lean", displayName: "bench storage" });
  for (let i = 0; i < warmupTurns; i++) await turn(chat.id, sample(textBytes, i));
  const before = await settle(client, [chat.id]);
  let textPerTurn = 0;
  let calls;
  let after;
  // Untimed: the commit count's tracer slows every syscall while it is attached.
  const commits = await countCommits(server?.pid, async () => {
    calls = await callsPer(client, storageTurns, async () => {
      for (let i = 0; i < storageTurns; i++) {
        const text = sample(textBytes, i);
        textPerTurn += (Buffer.byteLength(text) + Buffer.byteLength(`echo: ${text}`)) / storageTurns; // the builtin echo's reply
        await turn(chat.id, text);
      }
    });
    after = await settle(client, [chat.id]);
  });
  const agentBytes = (after.agents[0].bytes - before.agents[0].bytes) / storageTurns;
  const tenantBytes = (after.tenant.bytes - before.tenant.bytes) / storageTurns;
  const agentRows = rowDelta(before.agents[0].rows, after.agents[0].rows);
  const tenantRows = rowDelta(before.tenant.rows, after.tenant.rows);
  const perTable = (b, a) => Object.fromEntries(Object.entries(rowDelta(b ?? {}, a ?? {})).map(([k, v]) => [k, v / storageTurns]));
  const agentPayload = perTable(before.agents[0].payload, after.agents[0].payload);
  const tenantPayload = perTable(before.tenant.payload, after.tenant.payload);
  const agentSplit = keptShare(agentBytes, agentPayload);
  const tenantSplit = keptShare(tenantBytes, tenantPayload);
  const keptBytes = agentSplit.kept + tenantSplit.kept;
  const perTurn = {
    textBytes: textPerTurn,
    agentBytes,
    tenantBytes,
    totalBytes: agentBytes + tenantBytes,
    overheadBytes: agentBytes + tenantBytes - textPerTurn,
    // What a turn keeps (history), the goal's measure; the rest is held only within the retention window.
    keptBytes,
    keptOverheadBytes: keptBytes - textPerTurn,
    agentKeptBytes: agentSplit.kept,
    tenantKeptBytes: tenantSplit.kept,
    boundedBytes: agentSplit.bounded + tenantSplit.bounded,
    // SQL statements each object ran per turn (bench-only meter: src/objects/shared/seams/statement-meter.ts); null when unmetered.
    agentStatements: statementsPerTurn(before.agents[0], after.agents[0], storageTurns),
    tenantStatements: statementsPerTurn(before.tenant, after.tenant, storageTurns),
    commitsByKind: commits && Object.fromEntries(Object.entries(commits.byKind).map(([k, v]) => [k, v / storageTurns])),
    agentRows: sumRows(agentRows) / storageTurns,
    tenantRows: sumRows(tenantRows) / storageTurns,
    agentRowsByTable: Object.fromEntries(Object.entries(agentRows).map(([k, v]) => [k, v / storageTurns])),
    tenantRowsByTable: Object.fromEntries(Object.entries(tenantRows).map(([k, v]) => [k, v / storageTurns])),
    agentPayloadBytesByTable: agentPayload,
    tenantPayloadBytesByTable: tenantPayload,
  };
  log(`  storage: ${fmt(perTurn.totalBytes, 0)} B per turn (${fmt(perTurn.textBytes, 0)} B of it message text), ${fmt(perTurn.keptBytes, 0)} B of it kept; SQL statements per turn: agent ${perTurn.agentStatements === null ? "n/a" : fmt(perTurn.agentStatements, 1)}, tenant ${perTurn.tenantStatements === null ? "n/a" : fmt(perTurn.tenantStatements, 1)}`);

  // ---------------------------------------------------------------- TenantDO calls per tool call
  let toolCalls = null;
  let toolNote = null;
  if (calls) {
    const { body: category } = await client.call("POST", "/v1/journal/categories", { name: "Bench" });
    const { body: toolAgent } = await client.call("POST", "/v1/agents", {
      kind: "coach", // a kind whose profile holds taskWrite: create_task must pass the capability gate
      displayName: "bench tools",
      model: "builtin:playbook",
      allowedCategoryIds: [category.id],
      playbook: { rules: [{ when: { reason: "userInitiated" }, reply: "done: {{results.0.output.task.title}}" }] },
    });
    const command = (i) => `/tool create_task {"title":"bench ${i}","categoryId":"${category.id}"}`;
    try {
      await turn(toolAgent.id, command("warm-up"));
      const withTool = await callsPer(client, toolTurns, async () => {
        for (let i = 0; i < toolTurns; i++) await turn(toolAgent.id, command(i));
      });
      // The run's own report is a chat turn's cost, not the tool's; it is not subtracted as "per chat turn", since
      // back-to-back chat turns share reports (one is in flight at a time) while a tool turn's run is longer.
      toolCalls = { perToolTurn: withTool.perUnit, perToolCall: withTool.perUnit - (withTool.byMethod.reportRun ?? 0), byMethod: withTool.byMethod };
    } catch (err) {
      toolNote = `tool turns did not complete: ${err.message.slice(0, 200)}`;
    }
  }

  const ms = (v) => fmt(v, 2);
  const na = (v, digits = 2) => (v === null || v === undefined ? "n/a" : fmt(v, digits));
  const text = [
    `Streaming turn (POST …/messages, Accept: text/event-stream → its run.completed frame), builtin model, ${streamingTurns} turns per agent, interleaved`,
    table(
      ["measure", "n", "p50 ms", "p99 ms", "mean ms"],
      [
        [`streaming turn, agent with ${youngEvents} events`, streaming.young.n, ms(streaming.young.p50), ms(streaming.young.p99), ms(streaming.young.mean)],
        [`streaming turn, agent with ${agedEvents} events`, streaming.aged.n, ms(streaming.aged.p50), ms(streaming.aged.p99), ms(streaming.aged.mean)],
        [`  (100-event agent: first byte / body end)`, streaming.youngFirstByte.n, `${ms(streaming.youngFirstByte.p50)} / ${ms(streaming.youngBodyEnd.p50)}`, `${ms(streaming.youngFirstByte.p99)} / ${ms(streaming.youngBodyEnd.p99)}`, ""],
        ["empty Worker request (GET /healthz)", streaming.empty.n, ms(streaming.empty.p50), ms(streaming.empty.p99), ms(streaming.empty.mean)],
      ],
    ),
    "",
    `Stored per chat turn, steady state (${storageTurns} streaming turns of ${textBytes}-byte text after ${warmupTurns} warm-up; SQLite file growth of the agent's and the tenant's object)`,
    table(
      ["object", "bytes/turn", "rows/turn", "rows by table"],
      [
        ["agent", fmt(agentBytes, 0), fmt(perTurn.agentRows, 2), Object.entries(perTurn.agentRowsByTable).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(", ")],
        ["tenant", fmt(tenantBytes, 0), fmt(perTurn.tenantRows, 2), Object.entries(perTurn.tenantRowsByTable).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(", ")],
        ["agent payload B", "", "", Object.entries(agentPayload).map(([k, v]) => `${k} ${fmt(v, 0)}`).join(", ")],
        ["tenant payload B", "", "", Object.entries(tenantPayload).map(([k, v]) => `${k} ${fmt(v, 0)}`).join(", ")],
        ["all objects", fmt(perTurn.totalBytes, 0), fmt(perTurn.agentRows + perTurn.tenantRows, 2), `message text ${fmt(textPerTurn, 0)} B → overhead ${fmt(perTurn.overheadBytes, 0)} B`],
        ["  kept (history)", fmt(keptBytes, 0), "", `agent ${fmt(agentSplit.kept, 0)}, tenant ${fmt(tenantSplit.kept, 0)}: text ${fmt(textPerTurn, 0)} B + ${fmt(keptBytes - textPerTurn, 0)} B`],
        ["  retention-bound", fmt(perTurn.boundedBytes, 0), "", `${[...RETENTION_BOUND].filter((t) => (agentPayload[t] ?? tenantPayload[t] ?? 0) > 0).join(", ")}: held ≤ their window (7 days), then pruned`],
      ],
    ),
    "",
    `Storage commits per chat turn (fsyncs of the user worker's workerd, strace): ${perTurn.commitsByKind ? Object.entries(perTurn.commitsByKind).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(", ") : "not counted (no strace)"}`,
    `TenantDO calls (vigil_do_calls_total{object="tenant"} on GET /v1/metrics): per chat turn ${na(calls?.perUnit)}, per tool call ${na(toolCalls?.perToolCall)}${calls ? "" : " (metric not exposed by this runtime)"}`,
    calls ? `  per chat turn by method: ${Object.entries(calls.byMethod).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(", ") || "none"}` : "",
    toolNote ? `  ${toolNote}` : "",
  ].filter((line) => line !== "").join("\n");

  return {
    name: "lean",
    parameters: params,
    method:
      "streaming turn = client time from sending POST /v1/agents/:id/messages (Accept: text/event-stream) to the arrival of its run.completed frame (first byte and body end reported too); agents aged with {op:'seedEvents'} filler events (dated now, marked forwarded); empty request = GET /healthz once per round; each timed request after quietMs of quiet (work the previous request left behind, such as a run report, is not timed as part of it); bytes per turn = growth of ctx.storage.sql.databaseSize of the agent's and the tenant's object over storageTurns turns after warm-up, read after the row counts stopped moving; kept bytes per turn = that growth × the share of the payload (columns + index keys) the history tables gained, the rest being retention-bound tables (events, tenant stream, dedupe and delivery records) pruned after their window; TenantDO calls = delta of sum(vigil_do_calls_total{object=\"tenant\"}) over the turns, net of the metric reads; per tool call = per tool turn − its runs' reports (reportRun)",
    results: { streaming, streamingRatios, perTurn, tenantCalls: { perChatTurn: calls?.perUnit ?? null, perToolCall: toolCalls?.perToolCall ?? null, chatByMethod: calls?.byMethod ?? null, toolTurnByMethod: toolCalls?.byMethod ?? null, note: calls ? toolNote : "vigil_do_calls_total not exposed by GET /v1/metrics" }, storageBefore: before, storageAfter: after },
    samples: { youngMs, agedMs, emptyMs, pairRatios, youngFirstByteMs: firstByteMs, youngBodyEndMs: endMs },
    summary: {
      streamingTurnVsEmptyRequest: streamingRatios.turnP50VsEmptyRequestP50,
      agedVsYoungStreamingTurn: streamingRatios.agedVsYoungPairedMedian,
      bytesPerTurn: perTurn.totalBytes,
      bytesPerTurnOverText: perTurn.overheadBytes,
      keptBytesPerTurn: perTurn.keptBytes,
      keptBytesPerTurnOverText: perTurn.keptOverheadBytes,
      tenantCallsPerChatTurn: calls?.perUnit ?? null,
      tenantCallsPerToolCall: toolCalls?.perToolCall ?? null,
    },
    text,
  };
}
