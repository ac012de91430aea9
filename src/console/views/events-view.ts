/**
 * The tenant's activity: the live event stream (every agent's events, filterable by type and agent),
 * outbound webhook deliveries, and the audit log.
 */
import type { TenantEvent } from "../../client";
import type { ViewContext } from "../context";
import { field, h, replace, table } from "../ui/dom";
import { plain, when } from "../ui/format";
import { follow, liveIndicator } from "../ui/live";
import { empty, failure, loading } from "../ui/status";

const KEEP = 300;

export async function eventsView(ctx: ViewContext, root: HTMLElement): Promise<void> {
  const type = h("input", {
    type: "search",
    name: "type",
    placeholder: "e.g. run. or decision.requested",
    autocomplete: "off",
  });
  const agent = h("input", { type: "search", name: "agent", placeholder: "ag_…", autocomplete: "off" });
  const filters = h("form", { class: "filters", role: "search" }, field("Event type", type), field("Agent", agent));
  filters.addEventListener("submit", (event) => event.preventDefault());
  const indicator = liveIndicator();
  const list = h("ol", { class: "event-list", "aria-label": "Events, newest first" });
  const placeholder = empty("No events yet. They appear here as agents wake, run and ask.");
  const deliveries = h("div", {}, loading("webhook deliveries"));
  const audit = h("div", {}, loading("the audit log"));
  replace(
    root,
    h("h1", {}, "Events"),
    filters,
    indicator,
    placeholder,
    list,
    h("h2", {}, "Outbound webhook deliveries"),
    deliveries,
    h("h2", {}, "Audit log"),
    audit,
  );

  const events: TenantEvent[] = [];
  const shows = (event: TenantEvent) =>
    event.type.includes(type.value.trim()) &&
    (!agent.value.trim() || (event.agentId ?? "").includes(agent.value.trim()));
  const row = (event: TenantEvent) =>
    h(
      "li",
      { "data-type": event.type },
      h("span", { class: "kind" }, event.type),
      ` ${event.agentId ?? "tenant"} · ${when(event.createdAt)} · `,
      plain(event.data, 240),
    );
  const redraw = () => replace(list, ...events.filter(shows).map(row));
  for (const control of [type, agent]) control.addEventListener("input", redraw);
  follow<TenantEvent>({
    signal: ctx.signal,
    stream: ctx.api.events.stream({ signal: ctx.signal }),
    indicator,
    relevant: () => false,
    refresh: () => undefined,
    onEvent: (event) => {
      placeholder.hidden = true;
      events.unshift(event);
      if (events.length > KEEP) events.pop();
      if (shows(event)) list.prepend(row(event));
      while (list.children.length > KEEP) list.lastElementChild?.remove();
    },
  });
  await Promise.all([loadDeliveries(ctx, deliveries), loadAudit(ctx, audit)]);
}

async function loadDeliveries(ctx: ViewContext, slot: HTMLElement): Promise<void> {
  try {
    const endpoints = await ctx.api.listWebhooks({ limit: 50 }, { signal: ctx.signal });
    if (endpoints.data.length === 0)
      return replace(slot, empty("No outbound webhook endpoints (POST /v1/webhooks adds one)."));
    const pages = await Promise.all(
      endpoints.data.map((e) => ctx.api.webhooks.deliveries(e.id, { limit: 20 }, { signal: ctx.signal })),
    );
    const rows = pages.flatMap((page, i) =>
      page.data.map((d) => [
        endpoints.data[i]!.url,
        d.eventType,
        h("span", { class: `badge ${d.status}` }, d.status),
        String(d.attempts),
        d.errorCode ?? "",
        when(d.updatedAt),
      ]),
    );
    replace(
      slot,
      h(
        "div",
        { class: "scroll" },
        table(
          "Webhook deliveries",
          ["Endpoint", "Event", "Status", "Attempts", "Error", "Updated"],
          rows,
          "No deliveries yet.",
        ),
      ),
    );
  } catch (error) {
    replace(slot, failure(error));
  }
}

async function loadAudit(ctx: ViewContext, slot: HTMLElement): Promise<void> {
  try {
    const page = await ctx.api.listAudit({ limit: 50 }, { signal: ctx.signal });
    const rows = page.data.map((e) => [when(e.at), e.actor, e.action, e.target ?? "", plain(e.detail, 160)]);
    replace(
      slot,
      h(
        "div",
        { class: "scroll" },
        table("Audit log", ["When", "Who", "Action", "Target", "Detail"], rows, "The audit log is empty."),
      ),
    );
  } catch (error) {
    replace(slot, failure(error));
  }
}
