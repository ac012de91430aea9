/**
 * An agent's timeline: its runs newest first (reason, status, duration, tokens, cost, and why a run
 * failed or stopped), kept current over the agent's event stream (resumed with Last-Event-ID by the client).
 */
import type { AgentEvent, Api } from "../../client";
import type { ViewContext } from "../context";
import { h, replace, table, type Child } from "../ui/dom";
import { count, runDuration, traceCost, traceTokens, usd, when } from "../ui/format";
import { follow, liveIndicator } from "../ui/live";
import { href } from "../router";
import { failure, loading } from "../ui/status";

type Agent = Api.Agent;
type Run = Api.Run;

export async function timelineView(ctx: ViewContext, root: HTMLElement, agent: Agent): Promise<void> {
  const indicator = liveIndicator();
  const list = h("div", { class: "scroll" }, loading("runs"));
  replace(root, h("h2", {}, "Runs"), indicator, list);
  const refresh = async () => {
    try {
      const page = await ctx.api.listRuns(agent.id, { limit: 50 }, { signal: ctx.signal });
      if (!ctx.signal.aborted) replace(list, runsTable(agent.id, page.data));
    } catch (error) {
      if (!ctx.signal.aborted)
        replace(
          list,
          failure(error, () => void refresh()),
        );
    }
  };
  await refresh();
  follow<AgentEvent>({
    signal: ctx.signal,
    stream: ctx.api.events(agent.id, { signal: ctx.signal }),
    indicator,
    relevant: (event) => /^(run|decision|tool|wake)\./.test(event.type),
    refresh,
  });
}

function runsTable(agentId: string, runs: Run[]): HTMLTableElement {
  return table(
    "Runs, newest first",
    ["Run", "Reason", "Status", "Enqueued", "Duration", "Tokens", "Cost", "Why"],
    runs.map((run) => runRow(agentId, run)),
    "No runs yet: the agent has not woken. Send it a message, or use Wake now.",
  );
}

function runRow(agentId: string, run: Run): Child[] {
  return [
    h(
      "a",
      { href: href({ page: "run", agentId, runKey: run.runKey }), "data-run-key": run.runKey },
      run.runKey.slice(0, 18),
    ),
    run.reason,
    h("span", { class: `badge ${run.status}`, "data-status": run.status }, run.status),
    when(run.enqueuedAt),
    runDuration(run),
    count(traceTokens(run.trace)),
    usd(traceCost(run.trace)),
    whyText(run),
  ];
}

/** Why a run is where it is, when that needs saying: failures, skips, stops and waits. */
export function whyText(run: Run): string {
  const trace = run.trace;
  const error = trace.error as { code?: unknown; message?: unknown } | string | undefined;
  const errorText =
    typeof error === "string" ? error : error && typeof error.message === "string" ? error.message : null;
  if (run.status === "failed_terminal")
    return `Failed: ${run.errorCode ?? "error"}${errorText ? ` — ${errorText}` : ""}`;
  if (run.status.startsWith("skipped"))
    return `Skipped${run.errorCode ? `: ${run.errorCode}` : ""}${errorText ? ` — ${errorText}` : ""}`;
  if (run.status === "interrupted") return "Interrupted by a newer message";
  if (run.status === "waiting") return "Waiting: for an approval, an answer or a tool's result";
  if (typeof trace.stopReason === "string") return `Stopped: ${trace.stopReason}`;
  if (run.status === "running" && run.startedAt && Date.now() - new Date(run.startedAt).getTime() > 5 * 60_000)
    return "Running for over 5 minutes: possibly stuck";
  return "";
}
