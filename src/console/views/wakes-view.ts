/**
 * What wakes an agent: its subscriptions (tokens, predicate), timers with their next firing in the
 * agent's time zone (with "Run now") and the scheduler's recent decisions, and its external trigger.
 */
import type { Api } from "../../client";
import type { ViewContext } from "../context";
import { button, h, replace, table } from "../ui/dom";
import { plain, when } from "../ui/format";
import { failure, loading, notice } from "../ui/status";

type Agent = Api.Agent;
type Timer = Api.Timer;

export async function wakesView(ctx: ViewContext, root: HTMLElement, agent: Agent): Promise<void> {
  replace(root, loading("wakes"));
  const [subscriptions, timers, usage] = await Promise.all([
    ctx.api.listSubscriptions(agent.id, { limit: 200 }, { signal: ctx.signal }),
    ctx.api.listTimers(agent.id, {}, { signal: ctx.signal }),
    ctx.api.getAgentUsage(agent.id, {}, { signal: ctx.signal }).catch(() => null),
  ]);
  if (ctx.signal.aborted) return;
  const zone = usage?.timeZone;
  const status = h("div", { class: "status-line" });
  const trigger: HTMLElement = h("div");
  trigger.append(button("Show the trigger URL", () => showTrigger(ctx, agent.id, trigger)));
  replace(
    root,
    status,
    h("h2", {}, "Subscriptions"),
    h(
      "div",
      { class: "scroll" },
      table(
        "Subscriptions",
        ["Tokens", "Predicate", "Session", "Since"],
        subscriptions.data.map((s) => [
          s.tokens.map((t) => `${t.tokenClass}:${t.tokenValue}`).join(", "),
          plain(s.predicate ?? "any change"),
          s.sessionId ?? "own thread",
          when(s.createdAt),
        ]),
        "No subscriptions: journal changes do not wake this agent.",
      ),
    ),
    h("h2", {}, `Timers${zone ? ` (times in ${zone})` : ""}`),
    h(
      "div",
      { class: "scroll" },
      table(
        "Timers",
        ["Name", "Schedule", "Next firing", "Status", "Recent decisions", ""],
        timers.data.map((t) => timerRow(ctx, agent.id, t, zone, status)),
        "No timers.",
      ),
    ),
    h("h2", {}, "External trigger"),
    h("p", { class: "muted" }, "A secret URL that wakes this agent when anything POSTs to it."),
    trigger,
  );
}

function timerRow(ctx: ViewContext, agentId: string, timer: Timer, zone: string | undefined, status: HTMLElement) {
  const spec =
    timer.spec.kind === "cron"
      ? `cron ${timer.spec.expr} (${timer.spec.timeZone})`
      : timer.spec.kind === "interval"
        ? `every ${timer.spec.everySeconds} s`
        : `once at ${when(timer.spec.at, zone)}`;
  const recent = timer.recentDecisions
    .slice(0, 3)
    .map((d) => `${d.action}${d.runStatus ? ` → ${d.runStatus}` : ""} (${when(d.createdAt, zone)})`)
    .join("; ");
  const runNow = button(
    "Run now",
    async () => {
      try {
        const { runKey } = await ctx.api.triggerTimer(agentId, timer.id);
        replace(status, notice(`Timer ${timer.name ?? timer.id} runs now (run ${runKey}).`));
      } catch (error) {
        replace(status, failure(error));
      }
    },
    { "aria-label": `Run ${timer.name ?? timer.id} now` },
  );
  return [
    timer.name ?? timer.id,
    spec,
    when(timer.nextRunAt, zone),
    timer.status,
    recent || "none yet",
    timer.status === "active" ? runNow : "",
  ];
}

async function showTrigger(ctx: ViewContext, agentId: string, slot: HTMLElement): Promise<void> {
  try {
    const trigger = await ctx.api.manageTrigger(agentId, { action: "provision" });
    replace(
      slot,
      h(
        "p",
        {},
        `Status ${trigger.status}: `,
        h("code", {}, trigger.url ?? "(the URL is shown only when it is created or rotated)"),
      ),
    );
  } catch (error) {
    replace(slot, failure(error));
  }
}
