/** Brakes: the active ones with what they stop and a Release button; a form to engage a new one. */
import type { Api } from "../../client";
import type { ViewContext } from "../context";
import { button, field, h, replace, select, table } from "../ui/dom";
import { when } from "../ui/format";
import { failure, notice } from "../ui/status";

type Agent = Api.Agent;
type Brake = Api.Brake;
type EngageBrake = Api.EngageBrake;

const STOPS: Record<Brake["behaviour"], string> = {
  pause: "new wakes are refused; read tools still run; in-flight runs stop at their next step",
  kill: "new wakes are refused; every tool stops; in-flight runs end failed_terminal",
};

export async function brakesSection(ctx: ViewContext, root: HTMLElement, agents: Agent[]): Promise<void> {
  const status = h("div", { class: "status-line" });
  const list = h("div", { class: "scroll" });
  replace(
    root,
    h("h2", {}, "Brakes"),
    status,
    engageForm(ctx, agents, status, () => void refresh()),
    list,
  );
  async function refresh(): Promise<void> {
    try {
      const page = await ctx.api.listBrakes({ status: "active", limit: 100 }, { signal: ctx.signal });
      if (ctx.signal.aborted) return;
      const names = new Map(agents.map((a) => [a.id, a.displayName]));
      const rows = page.data.map((brake) => [
        brake.scope === "agent"
          ? `agent ${names.get(brake.target ?? "") ?? brake.target}`
          : `${brake.scope}${brake.target ? ` ${brake.target}` : ""}`,
        brake.behaviour,
        STOPS[brake.behaviour],
        brake.reason,
        `${brake.initiatedBy}, ${when(brake.createdAt)}`,
        button("Release", async () => {
          try {
            await ctx.api.releaseBrake(brake.id);
            replace(status, notice("Brake released: wakes are admitted again."));
            await refresh();
          } catch (error) {
            replace(status, failure(error));
          }
        }),
      ]);
      replace(
        list,
        table(
          "Active brakes",
          ["Stops", "Behaviour", "What it stops", "Reason", "Engaged", ""],
          rows,
          "No brake is engaged.",
        ),
      );
    } catch (error) {
      if (!ctx.signal.aborted)
        replace(
          list,
          failure(error, () => void refresh()),
        );
    }
  }
  await refresh();
}

function engageForm(ctx: ViewContext, agents: Agent[], status: HTMLElement, refresh: () => void): HTMLElement {
  const target = select("target", [
    ["", "Every agent of the tenant"],
    ...agents.map((a): [string, string] => [a.id, a.displayName]),
  ]);
  const behaviour = select("behaviour", [
    ["pause", "Pause"],
    ["kill", "Kill"],
  ]);
  const reason = h("input", { name: "reason", autocomplete: "off", placeholder: "Why (shown to the team)" });
  const form = h(
    "form",
    { class: "inline-form" },
    field("Brake", target),
    field("Behaviour", behaviour),
    field("Reason", reason),
    h("button", { type: "submit", class: "danger" }, "Engage brake"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body: EngageBrake = target.value
      ? {
          scope: "agent",
          target: target.value,
          behaviour: behaviour.value as Brake["behaviour"],
          reason: reason.value.trim() || "engaged in the console",
        }
      : {
          scope: "all",
          behaviour: behaviour.value as Brake["behaviour"],
          reason: reason.value.trim() || "engaged in the console",
        };
    ctx.api
      .engageBrake(body)
      .then(() => {
        replace(status, notice(`Brake engaged: ${STOPS[body.behaviour]}.`));
        refresh();
      })
      .catch((error: unknown) => replace(status, failure(error)));
  });
  return form;
}
