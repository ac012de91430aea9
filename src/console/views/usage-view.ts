/** Usage and budgets: today's tokens and cost per agent against its budget, the last 7 days, and the brakes. */
import type { Api } from "../../client";
import { brakesSection } from "./brakes-view";
import { barChart } from "../ui/chart";
import type { ViewContext } from "../context";
import { h, replace } from "../ui/dom";
import { count, usd } from "../ui/format";
import { failure, loading } from "../ui/status";

type Agent = Api.Agent;
type AgentUsage = Api.AgentUsage;

const DAYS = 7;
const MAX_AGENTS = 25;

export async function usageView(ctx: ViewContext, root: HTMLElement): Promise<void> {
  const charts = h("div", { class: "charts" }, loading("usage"));
  const brakes = h("section", {}, loading("brakes"));
  replace(root, h("h1", {}, "Usage"), charts, brakes);
  const agents = (await ctx.api.listAgents({ limit: 200 }, { signal: ctx.signal })).data.filter(
    (a) => a.lifecycle !== "destroyed",
  );
  void brakesSection(ctx, brakes, agents);
  try {
    const shown = agents.slice(0, MAX_AGENTS);
    const today = await Promise.all(shown.map((a) => ctx.api.getAgentUsage(a.id, {}, { signal: ctx.signal })));
    const days = lastDays(today[0]?.day);
    const history = await Promise.all(
      days.map((day) => Promise.all(shown.map((a) => ctx.api.getAgentUsage(a.id, { day }, { signal: ctx.signal })))),
    );
    if (ctx.signal.aborted) return;
    replace(
      charts,
      ...perAgent(shown, today),
      perDay(days, history),
      agents.length > MAX_AGENTS ? h("p", { class: "muted" }, `The first ${MAX_AGENTS} agents are shown.`) : null,
    );
  } catch (error) {
    if (!ctx.signal.aborted) replace(charts, failure(error));
  }
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

function perDay(days: string[], history: AgentUsage[][]): HTMLElement {
  return barChart(
    `Tokens per day, all agents (last ${DAYS} days)`,
    days.map((day, i) => {
      const total = history[i]!.reduce((sum, u) => sum + u.usage.tokens, 0);
      return { label: day, value: total, text: count(total) };
    }),
    `No tokens used in the last ${DAYS} days.`,
  );
}

/** The `DAYS` calendar days ending with `today` (YYYY-MM-DD), oldest first. */
function lastDays(today: string | undefined): string[] {
  const end = today ? new Date(`${today}T00:00:00Z`) : new Date();
  return Array.from({ length: DAYS }, (_, i) =>
    new Date(end.getTime() - (DAYS - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}
