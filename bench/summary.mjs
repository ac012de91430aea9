// The issue-12 summary: one row per figure, taken from the benchmarks that ran (others read "not run").
import { fmt } from "./lib/stats.mjs";

const row = (measure, value, display, goal, pass) => ({ measure, value, display, goal, verdict: value === null || value === undefined ? "n/a" : pass ? "PASS" : "FAIL" });

export function summaryRows(results) {
  const rows = [];
  const { history, wake, alertness, lean, rows: counted } = results;
  if (history) {
    const small = history.results.perSize[0];
    const large = history.results.perSize.at(-1);
    const us = small.perOpMicros.median;
    rows.push(row(`append + assemble op (${small.size} messages)`, us, `${fmt(us / 1000, 3)} ms`, "≤ 0.5 ms", us <= 500));
    if (wake) {
      // Side by side with one DO SQLite write of the same run: load on the machine scales both alike.
      const perWrite = us / wake.results.sqliteWriteMicros.p50;
      rows.push({ measure: "  append + assemble / one DO SQLite write", value: perWrite, display: `${fmt(perWrite, 1)}× (≈ ${fmt((perWrite * 29) / 1000, 2)} ms at the unloaded 29 µs write)`, goal: "≤ 17× (0.5 ms / 29 µs; was 80×)", verdict: perWrite <= 17 ? "PASS" : "FAIL" });
    }
    const parts = history.results.breakdownMicros;
    if (parts) rows.push({ measure: "  profile: plan / assemble / append alone", value: null, display: Object.entries(parts).map(([k, v]) => `${k} ${fmt(v.median / 1000, 2)} ms`).join(", "), goal: "", verdict: "info" });
    rows.push(row(`  ${large.size} vs ${small.size} messages`, history.results.ratioLargestVsSmallest, `${fmt(history.results.ratioLargestVsSmallest, 2)}×`, `≤ ${history.results.bound}×`, history.results.pass));
  } else rows.push(row("append + assemble op", null, "not run", "≤ 0.5 ms"));
  if (wake) {
    const r = wake.results.ratios.wakeP50VsEmptyRequestP50;
    rows.push({ measure: "wake p50 (POST → run.completed on SSE) / empty request p50", value: r, display: `${fmt(r, 2)}× (${fmt(wake.results.wakeMs.p50, 2)} / ${fmt(wake.results.emptyRequestMs.p50, 2)} ms)`, goal: "(was 5.1×)", verdict: "info" });
    rows.push({ measure: "  one DO SQLite write", value: wake.results.sqliteWriteMicros.p50, display: `${fmt(wake.results.sqliteWriteMicros.p50, 1)} µs`, goal: "(was 29 µs)", verdict: "info" });
  }
  if (lean) {
    const s = lean.results.streaming;
    const r = lean.results.streamingRatios;
    const t = lean.results.perTurn;
    const c = lean.results.tenantCalls;
    rows.push(row("streaming turn p50 / empty request p50", r.turnP50VsEmptyRequestP50, `${fmt(r.turnP50VsEmptyRequestP50, 2)}× (${fmt(s.young.p50, 2)} / ${fmt(s.empty.p50, 2)} ms)`, "≤ 3×", r.turnP50VsEmptyRequestP50 <= 3));
    rows.push(row(`streaming turn, ${lean.parameters.agedEvents} vs ${lean.parameters.youngEvents} events (paired)`, r.agedVsYoungPairedMedian, `${fmt(r.agedVsYoungPairedMedian, 2)}× (p50 ${fmt(s.aged.p50, 2)} vs ${fmt(s.young.p50, 2)} ms)`, "≤ 1.2×", r.agedVsYoungPairedMedian <= 1.2));
    // The goal is about what a turn keeps (steady state: retention-bound tables are pruned as fast as they grow).
    rows.push(row("bytes kept per chat turn, all objects", t.keptBytes, `${fmt(t.keptBytes, 0)} B = ${fmt(t.textBytes, 0)} B text + ${fmt(t.keptOverheadBytes, 0)} B (agent ${fmt(t.agentKeptBytes, 0)}, tenant ${fmt(t.tenantKeptBytes, 0)})`, "≤ 2 KB + text", t.keptOverheadBytes <= 2048));
    rows.push({ measure: "  + held within the retention window", value: t.totalBytes, display: `${fmt(t.totalBytes, 0)} B stored per turn in all (agent ${fmt(t.agentBytes, 0)}, tenant ${fmt(t.tenantBytes, 0)}; ${fmt(t.boundedBytes, 0)} B pruned after 7 days)`, goal: "", verdict: "info" });
    rows.push({ measure: "rows stored per chat turn (agent + tenant)", value: t.agentRows + t.tenantRows, display: `${fmt(t.agentRows + t.tenantRows, 1)} (agent ${fmt(t.agentRows, 1)}, tenant ${fmt(t.tenantRows, 1)})`, goal: "", verdict: "info" });
    if (t.agentStatements !== null && t.agentStatements !== undefined) rows.push({ measure: "SQL statements per chat turn (agent + tenant)", value: t.agentStatements + t.tenantStatements, display: `${fmt(t.agentStatements + t.tenantStatements, 1)} (agent ${fmt(t.agentStatements, 1)}, tenant ${fmt(t.tenantStatements, 1)})`, goal: "", verdict: "info" });
    if (t.commitsByKind) rows.push({ measure: "storage commits (fsyncs) per chat turn", value: Object.values(t.commitsByKind).reduce((a, b) => a + b, 0), display: Object.entries(t.commitsByKind).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(", "), goal: "", verdict: "info" });
    // The turn's own calls are judged; the credential cache's refresh (`authenticate`, one per ≤ 30 s TTL per isolate,
    // issue 12 §1) is shown beside them, since it comes with the clock, not with the turn.
    const auth = (byMethod) => byMethod?.authenticate ?? 0;
    const chatTurn = c.perChatTurn === null ? null : c.perChatTurn - auth(c.chatByMethod);
    const toolCall = c.perToolCall === null ? null : c.perToolCall - auth(c.toolTurnByMethod);
    const refresh = (total, own) => (total === null ? "n/a" : `${fmt(own, 2)} (+ ${fmt(total - own, 2)} credential-cache refresh; ${fmt(total, 2)} in all)`);
    rows.push(row("TenantDO calls per chat turn", chatTurn, refresh(c.perChatTurn, chatTurn), "≤ 1", chatTurn !== null && chatTurn <= 1));
    rows.push(row("TenantDO calls per tool call", toolCall, refresh(c.perToolCall, toolCall), "≤ 2", toolCall !== null && toolCall <= 2));
  } else rows.push(row("streaming turn / bytes / TenantDO calls", null, "not run", ""));
  if (alertness) {
    const w = alertness.results.wakes.A;
    const perSecond = w.wakesPerSecond ?? (w.endedMs ? w.completed / (w.endedMs.max / 1000) : null);
    rows.push(row(`fan-out: one change matching ${w.agents} agents`, perSecond, perSecond === null ? "n/a" : `${fmt(perSecond, 0)} wakes/s, ${w.completed}/${w.agents} runs completed`, "≥ 150/s (2 cores)", perSecond !== null && perSecond >= 150 && w.completed === w.agents));
    const exactly = alertness.results.pass.wakes;
    rows.push(row("  every woken agent ran exactly once", exactly ? 1 : 0, exactly ? "yes" : "no", "yes", exactly));
  } else rows.push(row("fan-out wakes/s", null, "not run", "≥ 150/s"));
  if (counted) {
    for (const g of counted.goals) rows.push({ measure: g.measure, value: g.value, display: fmt(g.value, 2), goal: g.goal, verdict: g.pass === null ? "info" : g.pass ? "PASS" : "FAIL" });
    const { wake: w, tool } = counted.results;
    rows.push({ measure: "  billed rows written per wake / per tool turn", value: null, display: `${fmt(w.all.rowsWritten, 1)} / ${fmt(tool.all.rowsWritten, 1)}`, goal: "", verdict: "info" });
  } else rows.push(row("rows stored per chat turn", null, "not run", "≤ 8"));
  return rows;
}

// `node bench/summary.mjs bench/results/*-<stamp>.json`: the summary of an earlier run, from its JSON files.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { readFileSync } = await import("node:fs");
  const { table } = await import("./lib/stats.mjs");
  const results = {};
  for (const file of process.argv.slice(2)) {
    const r = JSON.parse(readFileSync(file, "utf8"));
    if (r.benchmark && r.benchmark !== "summary") results[r.benchmark] = r;
  }
  const rows = summaryRows(results);
  console.log(table(["measure", "value", "goal", "verdict"], rows.map((r) => [r.measure, r.display, r.goal, r.verdict])));
}
