/** Usage and budgets: today's tokens and cost per agent against its budget, an agent's last 7 days, the brakes. */
import type { Api } from "../../client";
import { brakesSection } from "./brakes-view";
import { barChart } from "../ui/chart";
import type { ViewContext } from "../context";
import { field, h, replace, select } from "../ui/dom";
import { count, usd } from "../ui/format";
import { failure, loading } from "../ui/status";

type Agent = Api.Agent;
type AgentUsage = Api.AgentUsage;

const DAYS = 7;
const MAX_AGENTS = 25;

export async function usageView(ctx: ViewContext, root: HTMLElement): Promise<void> {
  const charts = h("div", { class: "charts" }, loading("usage"));
  const daily = h("section", {});
  const brakes = h("section", {}, loading("brakes"));
  replace(root, h("h1", {}, "Usage"), charts, daily, brakes);
  const listed = await ctx.api.listAgents({ limit: 200 }, { signal: ctx.signal });
  const agents = listed.data.filter((a) => a.lifecycle !== "destroyed");
  void brakesSection(ctx, brakes, agents);
  try {
    // One request per agent (each counts against the key's rate limit): the first MAX_AGENTS only.
    const shown = agents.slice(0, MAX_AGENTS);
    const today = await Promise.all(shown.map((a) => ctx.api.getAgentUsage(a.id, {}, { signal: ctx.signal })));
    if (ctx.signal.aborted) return;
    const more =
      agents.length > MAX_AGENTS ? h("p", { class: "muted" }, `The first ${MAX_AGENTS} agents are shown.`) : null;
    replace(charts, ...perAgent(shown, today), more);
    const busiest = shown[today.reduce((best, u, i) => (u.usage.tokens > today[best]!.usage.tokens ? i : best), 0)];
    if (busiest) dailyChart(ctx, daily, shown, busiest.id, today[0]!.day);
  } catch (error) {
    if (!ctx.signal.aborted) replace(charts, failure(error));
  }
}

/** Tokens per day over the last `DAYS` days for one agent, chosen in a select (the busiest today first). */
function dailyChart(ctx: ViewContext, root: HTMLElement, agents: Agent[], agentId: string, today: string): void {
  const choice = select(
    "agent",
    agents.map((a): [string, string] => [a.id, a.displayName]),
    agentId,
  );
  const chart = h("div", {}, loading("daily usage"));
  replace(root, h("h2", {}, "Per day"), field("Agent", choice), chart);
  const days = lastDays(today);
  const draw = async () => {
    try {
      const usage = await Promise.all(
        days.map((day) => ctx.api.getAgentUsage(choice.value, { day }, { signal: ctx.signal })),
      );
      if (ctx.signal.aborted) return;
      const name = agents.find((a) => a.id === choice.value)?.displayName ?? choice.value;
      replace(chart, perDay(`Tokens per day, ${name} (last ${DAYS} days)`, days, usage));
    } catch (error) {
      if (!ctx.signal.aborted) replace(chart, failure(error));
    }
  };
  choice.addEventListener("change", () => void draw());
  void draw();
}

function perAgent(agents: Agent[], usage: AgentUsage[]): HTMLElement[] {
  const tokens = barChart(
    "Tokens today, per agent (line: daily budget)",
    usage.map((u, i) => ({
      label: agents[i]!.displayName,
      value: u.usage.tokens,
      text: `${count(u.usage.tokens)}${u.limits.tokens ? ` of ${count(u.limits.tokens)}` : ""}`,
      limit: u.limits.tokens,
    })),
    "No tokens used today.",
  );
  const cost = barChart(
    "Cost today, per agent",
    usage.map((u, i) => ({
      label: agents[i]!.displayName,
      value: u.usage.costMicroUsd,
      text: usd(u.usage.costMicroUsd),
      limit: u.limits.costMicroUsd,
    })),
    "Nothing spent today.",
  );
  return [tokens, cost];
}

function perDay(title: string, days: string[], usage: AgentUsage[]): HTMLElement {
  const bars = days.map((day, i) => ({
    label: day,
    value: usage[i]!.usage.tokens,
    text: count(usage[i]!.usage.tokens),
  }));
  return barChart(title, bars, `No tokens used in the last ${DAYS} days.`);
}

/** The `DAYS` calendar days ending with `today` (YYYY-MM-DD), oldest first. */
function lastDays(today: string | undefined): string[] {
  const end = today ? new Date(`${today}T00:00:00Z`) : new Date();
  return Array.from({ length: DAYS }, (_, i) =>
    new Date(end.getTime() - (DAYS - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}
