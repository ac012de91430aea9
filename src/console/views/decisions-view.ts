/**
 * The decisions inbox across the tenant: each pending approval with its tool, risk, arguments (as a
 * table), recommendation and deadline; Approve / Reject with a comment (choices for ask_user questions).
 * Answered ones are listed below with who answered and how.
 */
import type { Api } from "../../client";
import { argsTable } from "../ui/args-table";
import type { ViewContext } from "../context";
import { button, facts, field, h, replace, table } from "../ui/dom";
import { ago, plain, when } from "../ui/format";
import { follow, liveIndicator } from "../ui/live";
import { href } from "../router";
import { empty, failure, loading, notice } from "../ui/status";

type Decision = Api.Decision;

export async function decisionsView(ctx: ViewContext, root: HTMLElement): Promise<void> {
  const indicator = liveIndicator();
  const pending = h("div", {}, loading("pending decisions"));
  const answered = h("div", {}, loading("answered decisions"));
  replace(
    root,
    h("h1", {}, "Decisions"),
    indicator,
    h("h2", {}, "Waiting for you"),
    pending,
    h("h2", {}, "Recently answered"),
    answered,
  );
  const refresh = async () => {
    try {
      const [open, done, agents] = await Promise.all([
        ctx.api.listDecisions({ status: "pending", limit: 200 }, { signal: ctx.signal }),
        ctx.api.listDecisions({ status: "resolved", limit: 20 }, { signal: ctx.signal }),
        ctx.api.listAgents({ limit: 200 }, { signal: ctx.signal }),
      ]);
      if (ctx.signal.aborted) return;
      const names = new Map(agents.data.map((agent) => [agent.id, agent.displayName]));
      const cards = open.data.map((d) => card(ctx, d, names.get(d.agentId) ?? d.agentId, refresh));
      replace(
        pending,
        cards.length ? h("div", { class: "cards" }, ...cards) : empty("Nothing is waiting for a decision."),
      );
      replace(answered, answeredTable(done.data));
    } catch (error) {
      if (!ctx.signal.aborted)
        replace(
          pending,
          failure(error, () => void refresh()),
        );
    }
  };
  await refresh();
  follow({
    signal: ctx.signal,
    stream: ctx.api.events.stream({ signal: ctx.signal }),
    indicator,
    relevant: (event) => event.type.startsWith("decision."),
    refresh,
  });
}

function card(ctx: ViewContext, decision: Decision, agentName: string, refresh: () => Promise<void>): HTMLElement {
  const p = decision.payload;
  const tool = typeof p.toolName === "string" ? p.toolName : null;
  const title =
    typeof p.title === "string" ? p.title : tool ? `Allow ${tool}?` : plain(p.question ?? "A question for you");
  const comment = h("textarea", { name: "comment", rows: 2 });
  const status = h("div", {});
  const resolve = async (body: Parameters<typeof ctx.api.resolveDecision>[1], said: string) => {
    try {
      await ctx.api.resolveDecision(decision.id, body);
      replace(status, notice(said));
      await refresh();
    } catch (error) {
      replace(status, failure(error));
    }
  };
  const rationale = () => (comment.value.trim() ? { rationale: comment.value.trim() } : {});
  const options = Array.isArray(p.options) ? (p.options as Array<{ id?: unknown; label?: unknown }>) : [];
  const actions = options.length
    ? options.map((o) =>
        button(plain(o.label ?? o.id), () =>
          resolve(
            {
              resolutionType: "choose_option",
              chosenOptionId: String(o.id),
              ...(comment.value.trim() ? { answerText: comment.value.trim() } : {}),
            },
            "Answered.",
          ),
        ),
      )
    : [
        button("Approve", () => resolve({ resolutionType: "approve", ...rationale() }, "Approved."), {
          class: "primary",
        }),
        button("Reject", () => resolve({ resolutionType: "reject", ...rationale() }, "Rejected."), { class: "danger" }),
      ];
  const titleId = `decision-${decision.id}`;
  return h(
    "article",
    { class: "card decision", role: "group", "aria-labelledby": titleId, "data-decision-id": decision.id },
    h("h3", { id: titleId }, title),
    facts([
      ["Agent", h("a", { href: href({ page: "agent", agentId: decision.agentId, tab: "timeline" }) }, agentName)],
      ["Tool", tool ?? "—"],
      ["Risk", plain(p.riskLevel)],
      ["Recommendation", plain(p.recommendation)],
      ["Asked", ago(decision.createdAt)],
      ["Times out", timeoutText(p)],
    ]),
    tool ? h("h4", {}, "Arguments") : null,
    tool ? argsTable(p.argsPreview ?? p.args, p.argsFields) : null,
    field("Comment (optional)", comment),
    h("div", { class: "actions" }, ...actions),
    status,
  );
}

function answeredTable(decisions: Decision[]): HTMLElement {
  return h(
    "div",
    { class: "scroll" },
    table(
      "Recently answered decisions",
      ["What", "Answer", "By", "Comment", "When"],
      decisions.map((d) => {
        const r = d.resolution ?? {};
        const answer =
          r.resolutionType === "approve"
            ? "Approved"
            : r.resolutionType === "reject"
              ? "Rejected"
              : plain(r.chosenOptionId ?? r.resolutionType);
        return [
          plain(d.payload.title ?? d.payload.toolName ?? d.payload.question),
          answer,
          plain(r.actor),
          plain(r.rationale ?? r.answerText ?? ""),
          when(d.resolvedAt),
        ];
      }),
      "No decision answered yet.",
    ),
  );
}

/** When an unanswered decision times out, and what happens then (`timeoutPolicy.onTimeout`). */
function timeoutText(payload: Record<string, unknown>): string {
  if (payload.timedOut === true) return "timed out";
  if (typeof payload.dueAtMs !== "number") return "no deadline";
  const policy = payload.timeoutPolicy as { onTimeout?: unknown } | undefined;
  const then = typeof policy?.onTimeout === "string" ? `, then ${policy.onTimeout}` : "";
  return `${ago(new Date(payload.dueAtMs).toISOString())} (${when(new Date(payload.dueAtMs).toISOString())}${then})`;
}
