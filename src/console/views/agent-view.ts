/**
 * One agent: its header (lifecycle, model, Wake now, Pause / Resume) and tabs for timeline,
 * conversations, memory and wakes.
 */
import type { Api } from "../../client";
import type { ViewContext } from "../context";
import { conversationsView } from "./conversations-view";
import { button, h, replace } from "../ui/dom";
import { memoryView } from "./memory-view";
import { href, type AgentTab } from "../router";
import { failure, loading, notice } from "../ui/status";
import { timelineView } from "./timeline-view";
import { wakesView } from "./wakes-view";

type Agent = Api.Agent;

const TABS: Array<[AgentTab, string]> = [
  ["timeline", "Timeline"],
  ["conversations", "Conversations"],
  ["memory", "Memory"],
  ["wakes", "Wakes"],
];

export async function agentView(ctx: ViewContext, root: HTMLElement, agentId: string, tab: AgentTab): Promise<void> {
  replace(root, loading("the agent"));
  const agent = await ctx.api.getAgent(agentId, { signal: ctx.signal });
  if (ctx.signal.aborted) return;
  const status = h("div", { class: "status-line" });
  const body = h("section", { class: "tab-body", "aria-label": TABS.find(([id]) => id === tab)?.[1] ?? "" });
  const tabs = h(
    "nav",
    { class: "tabs", "aria-label": "Agent" },
    ...TABS.map(([id, text]) =>
      h("a", { href: href({ page: "agent", agentId, tab: id }), "aria-current": id === tab ? "page" : false }, text),
    ),
  );
  replace(root, header(ctx, agent, status), status, tabs, body);
  const views = { timeline: timelineView, conversations: conversationsView, memory: memoryView, wakes: wakesView };
  try {
    await views[tab](ctx, body, agent);
  } catch (error) {
    if (!ctx.signal.aborted) replace(body, failure(error));
  }
}

function header(ctx: ViewContext, agent: Agent, status: HTMLElement): HTMLElement {
  const act = async (what: string, call: () => Promise<unknown>) => {
    try {
      await call();
      replace(status, notice(what));
    } catch (error) {
      replace(status, failure(error));
    }
  };
  const actions = h("div", { class: "actions" });
  if (agent.lifecycle !== "destroyed") {
    actions.append(
      button("Wake now", () =>
        act("Wake queued: it appears in the timeline when it runs.", () => ctx.api.wakeAgent(agent.id)),
      ),
      agent.lifecycle === "dormant"
        ? button("Resume", () => act("Resumed.", () => ctx.api.resumeAgent(agent.id)))
        : button("Pause", () => act("Paused: it wakes again after Resume.", () => ctx.api.pauseAgent(agent.id))),
    );
  }
  return h(
    "header",
    { class: "page-head" },
    h(
      "div",
      {},
      h("p", { class: "crumbs" }, h("a", { href: "#/agents" }, "Agents"), " / "),
      h("h1", {}, agent.displayName),
    ),
    h(
      "p",
      { class: "muted" },
      h("span", { class: `badge ${agent.lifecycle}` }, agent.lifecycle),
      ` ${agent.mode} · ${agent.config.modelId} · ${agent.kind} · ${agent.id}`,
    ),
    actions,
  );
}
