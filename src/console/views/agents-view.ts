/**
 * Agents: every agent of the tenant with lifecycle, mode, model, last and next wake, open decisions and
 * today's usage; search and filters; create; Pause / Resume; Destroy after a confirmation.
 */
import type { Api } from "../../client";
import { confirmAction } from "../ui/confirm";
import type { ViewContext } from "../context";
import { button, field, h, replace, select, table, type Child } from "../ui/dom";
import { ago, count, usd } from "../ui/format";
import { href } from "../router";
import { empty, failure, loading, notice } from "../ui/status";

type Agent = Api.Agent;
type AgentState = Api.AgentState;
type AgentUsage = Api.AgentUsage;

interface Row {
  agent: Agent;
  state: AgentState | null;
  usage: AgentUsage | null;
  openDecisions: number;
}

export async function agentsView(ctx: ViewContext, root: HTMLElement): Promise<void> {
  const search = h("input", { type: "search", name: "q", placeholder: "Name or id", autocomplete: "off" });
  const lifecycle = select("lifecycle", [
    ["", "Any lifecycle"],
    ["active", "Active"],
    ["created", "Created"],
    ["dormant", "Dormant (paused)"],
    ["destroyed", "Destroyed"],
  ]);
  const mode = select("mode", [
    ["", "Any mode"],
    ["autonomous", "Autonomous"],
    ["interactive", "Interactive"],
    ["hybrid", "Hybrid"],
  ]);
  const filters = h(
    "form",
    { class: "filters", role: "search" },
    field("Search", search),
    field("Lifecycle", lifecycle),
    field("Mode", mode),
  );
  filters.addEventListener("submit", (event) => event.preventDefault());
  const status = h("div", { class: "status-line" });
  const list = h("div", {}, loading("agents"));
  replace(
    root,
    h("h1", {}, "Agents"),
    createForm(ctx, status, () => void load(true)),
    filters,
    status,
    list,
  );

  // The API filters (GET /v1/agents?q=&lifecycle=&mode=); only the newest request's answer is shown.
  let latest = 0;
  let typing: ReturnType<typeof setTimeout> | undefined;
  for (const control of [search, lifecycle, mode]) {
    control.addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(() => void load(), control === search ? 250 : 0);
    });
  }

  const details: Details = new Map();
  async function load(fresh = false): Promise<void> {
    if (fresh) details.clear();
    const request = ++latest;
    const filter: AgentQuery = { limit: 200 };
    if (search.value.trim()) filter.q = search.value.trim();
    if (lifecycle.value) filter.lifecycle = lifecycle.value as Agent["lifecycle"];
    if (mode.value) filter.mode = mode.value as Agent["mode"];
    try {
      const rows = await loadRows(ctx, filter, details);
      if (!ctx.signal.aborted && request === latest)
        replace(
          list,
          agentsTable(ctx, rows, status, () => void load(true)),
        );
    } catch (error) {
      if (!ctx.signal.aborted)
        replace(
          list,
          failure(error, () => void load()),
        );
    }
  }
  await load();
}

const DETAILED = 25;

type AgentQuery = NonNullable<Parameters<ViewContext["api"]["listAgents"]>[0]>;

/** An agent's wakes and today's usage, as one load of this view read them. */
type Details = Map<string, Promise<Pick<Row, "state" | "usage">>>;

/**
 * The filtered agents with their open decisions; wakes and usage cost two requests per agent against the key's
 * rate limit, so they are read for the first DETAILED rows only, and a filter change reuses what this view
 * already read (`details`; emptied after an action, which reloads from scratch).
 */
async function loadRows(ctx: ViewContext, filter: AgentQuery, details: Details): Promise<Row[]> {
  const [agents, pending] = await Promise.all([
    ctx.api.listAgents(filter, { signal: ctx.signal }),
    ctx.api.listDecisions({ status: "pending", limit: 200 }, { signal: ctx.signal }),
  ]);
  const open = new Map<string, number>();
  for (const decision of pending.data) open.set(decision.agentId, (open.get(decision.agentId) ?? 0) + 1);
  const read = (agent: Agent) =>
    Promise.all([
      ctx.api.getAgentState(agent.id, { signal: ctx.signal }).catch(() => null),
      ctx.api.getAgentUsage(agent.id, {}, { signal: ctx.signal }).catch(() => null),
    ]).then(([state, usage]) => ({ state, usage }));
  return Promise.all(
    agents.data.map(async (agent, index) => {
      const none = { state: null, usage: null };
      const openDecisions = open.get(agent.id) ?? 0;
      if (agent.lifecycle === "destroyed" || index >= DETAILED) return { agent, ...none, openDecisions };
      if (!details.has(agent.id)) details.set(agent.id, read(agent));
      return { agent, ...(await details.get(agent.id)!), openDecisions };
    }),
  );
}

function agentsTable(ctx: ViewContext, rows: Row[], status: HTMLElement, reload: () => void): HTMLElement {
  if (rows.length === 0) return empty("No agents match. Create one above, or clear the search and filters.");
  const headers = [
    "Agent",
    "Lifecycle",
    "Mode",
    "Model",
    "Last wake",
    "Next wake",
    "Open decisions",
    "Today",
    "Actions",
  ];
  return h(
    "div",
    { class: "scroll" },
    table(
      "Agents",
      headers,
      rows.map((row) => agentRow(ctx, row, status, reload)),
      "No agents yet.",
    ),
  );
}

function agentRow(
  ctx: ViewContext,
  { agent, state, usage, openDecisions }: Row,
  status: HTMLElement,
  reload: () => void,
): Child[] {
  const link = h("a", { href: href({ page: "agent", agentId: agent.id, tab: "timeline" }) }, agent.displayName);
  const actions = h("div", { class: "actions" });
  const act = async (what: string, call: () => Promise<unknown>) => {
    try {
      await call();
      replace(status, notice(`${agent.displayName}: ${what}.`));
      reload();
    } catch (error) {
      replace(status, failure(error));
    }
  };
  if (agent.lifecycle === "dormant")
    actions.append(
      button("Resume", () => act("resumed", () => ctx.api.resumeAgent(agent.id)), {
        "aria-label": `Resume ${agent.displayName}`,
      }),
    );
  else if (agent.lifecycle !== "destroyed")
    actions.append(
      button("Pause", () => act("paused", () => ctx.api.pauseAgent(agent.id)), {
        "aria-label": `Pause ${agent.displayName}`,
      }),
    );
  if (agent.lifecycle !== "destroyed") {
    actions.append(
      button(
        "Destroy",
        async () => {
          const sure = await confirmAction(
            `Destroy ${agent.displayName}?`,
            "Destroying is final: the agent stops waking and cannot be resumed.",
            "Destroy",
          );
          if (sure) await act("destroyed", () => ctx.api.destroyAgent(agent.id));
        },
        { class: "danger", "aria-label": `Destroy ${agent.displayName}` },
      ),
    );
  }
  const today = usage ? `${count(usage.usage.tokens)} tokens · ${usd(usage.usage.costMicroUsd)}` : "—";
  return [
    h("div", {}, link, h("div", { class: "muted small" }, `${agent.kind} · ${agent.id}`)),
    h("span", { class: `badge ${agent.lifecycle}` }, agent.lifecycle),
    agent.mode,
    agent.config.modelId,
    ago(state?.lastWakeAt),
    state?.nextWakeAt ? ago(state.nextWakeAt) : "—",
    openDecisions ? h("a", { href: "#/decisions", class: "badge pending" }, String(openDecisions)) : "0",
    today,
    actions,
  ];
}

function createForm(ctx: ViewContext, status: HTMLElement, reload: () => void): HTMLElement {
  const name = h("input", { name: "displayName", required: true, autocomplete: "off" });
  const kind = h("input", { name: "kind", required: true, value: "coach", autocomplete: "off" });
  const model = h("input", { name: "model", value: "builtin:echo", autocomplete: "off" });
  const mode = select(
    "mode",
    [
      ["hybrid", "Hybrid"],
      ["interactive", "Interactive"],
      ["autonomous", "Autonomous"],
    ],
    "hybrid",
  );
  const submit = h("button", { type: "submit" }, "Create agent");
  const form = h(
    "form",
    { class: "inline-form" },
    field("Name", name),
    field("Kind", kind),
    field("Model", model),
    field("Mode", mode),
    submit,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit.disabled = true;
    ctx.api
      .createAgent({
        displayName: name.value.trim(),
        kind: kind.value.trim(),
        model: model.value.trim() || undefined,
        mode: mode.value as Agent["mode"],
      })
      .then((agent) => {
        replace(status, notice(`Created ${agent.displayName} (${agent.id}).`));
        form.reset();
        reload();
      })
      .catch((error: unknown) => replace(status, failure(error)))
      .finally(() => (submit.disabled = false));
  });
  return h("details", { class: "panel" }, h("summary", {}, "Create an agent"), form);
}
