/**
 * One run as a waterfall of its steps: model calls (model, outcome, latency, attempts), tool calls
 * (arguments as a table, result, saga status, approval), the policy gates it met, and the messages it wrote.
 */
import type { Api } from "../../client";
import { argsTable } from "../ui/args-table";
import type { ViewContext } from "../context";
import { facts, h, replace, table } from "../ui/dom";
import { count, duration, plain, runDuration, traceCost, traceTokens, usd, when } from "../ui/format";
import { href } from "../router";
import { loading } from "../ui/status";
import { whyText } from "./timeline-view";

type Decision = Api.Decision;
type Message = Api.Message;
type Run = Api.Run;

type Rec = Record<string, unknown>;
const recs = (value: unknown): Rec[] =>
  Array.isArray(value) ? value.filter((v): v is Rec => typeof v === "object" && v !== null) : [];

export async function runView(ctx: ViewContext, root: HTMLElement, agentId: string, runKey: string): Promise<void> {
  replace(root, loading("the run"));
  const run = await ctx.api.getRun(agentId, runKey, { signal: ctx.signal });
  const [messages, decisions] = await Promise.all([
    ctx.api.listMessages(agentId, { threadId: run.threadId, limit: 200 }, { signal: ctx.signal }),
    ctx.api.listDecisions({ agentId, limit: 200 }, { signal: ctx.signal }),
  ]);
  if (ctx.signal.aborted) return;
  const mine = messages.data.filter((message) => message.metadata.runKey === runKey).reverse();
  const approvals = decisions.data.filter((decision) => decision.runKey === runKey);
  replace(
    root,
    h(
      "p",
      { class: "crumbs" },
      h("a", { href: "#/agents" }, "Agents"),
      " / ",
      h("a", { href: href({ page: "agent", agentId, tab: "timeline" }) }, "Timeline"),
      " /",
    ),
    h("h1", {}, `Run ${runKey}`),
    summary(run),
    h("h2", {}, "Model calls"),
    modelCalls(run.trace),
    h("h2", {}, "Tool calls"),
    toolCalls(run.trace, mine, approvals),
    h("h2", {}, "Policy gates"),
    policy(run.trace),
    h("h2", {}, "Messages written"),
    messageList(mine),
  );
}

function summary(run: Run): HTMLElement {
  const why = whyText(run);
  return h(
    "div",
    {},
    why ? h("p", { class: run.status === "failed_terminal" ? "notice error" : "notice", "data-why": "" }, why) : null,
    facts([
      ["Status", h("span", { class: `badge ${run.status}`, "data-status": run.status }, run.status)],
      ["Reason", run.reason],
      ["Attempt", String(run.attempt)],
      ["Enqueued", when(run.enqueuedAt)],
      ["Started", when(run.startedAt)],
      ["Ended", when(run.endedAt)],
      ["Duration", runDuration(run)],
      ["Model", plain(run.trace.model)],
      ["Steps", plain(run.trace.steps)],
      ["Tokens", count(traceTokens(run.trace))],
      ["Cost", usd(traceCost(run.trace))],
    ]),
  );
}

function modelCalls(trace: Rec): HTMLElement {
  const rows = recs(trace.attempts).map((a) => [
    plain(a.provider),
    plain(a.model),
    plain(a.attempt),
    plain(a.outcome),
    plain(a.errorCode ?? a.status),
    duration(a.durationMs as number),
  ]);
  return h(
    "div",
    { class: "scroll" },
    table(
      "Model calls",
      ["Provider", "Model", "Attempt", "Outcome", "Status / error", "Latency"],
      rows,
      "No model call was recorded.",
    ),
  );
}

function toolCalls(trace: Rec, messages: Message[], approvals: Decision[]): HTMLElement {
  const calls = recs(trace.toolCalls);
  if (calls.length === 0) return h("p", { class: "state empty" }, "This run called no tools.");
  return h(
    "ol",
    { class: "waterfall" },
    ...calls.map((call) => {
      const operationId = String(call.operationId ?? "");
      const action = messages.find((m) => m.kind === "action" && m.metadata.operationId === operationId);
      const result = messages.find((m) => m.kind === "toolResult" && m.metadata.operationId === operationId);
      const approval = approvals.find((d) => d.operationId === operationId);
      const envelope = (action?.content ?? {}) as Rec;
      return h(
        "li",
        { class: "step", "data-tool": String(call.name ?? "") },
        h(
          "h3",
          {},
          `${plain(call.name)} `,
          h(
            "span",
            { class: `badge ${call.ok === false ? "failed_terminal" : plain(call.status)}` },
            plain(call.status),
          ),
        ),
        facts([
          ["Step", plain(call.step)],
          ["Risk", plain(call.riskLevel)],
          ["Outcome", call.ok === false ? `failed: ${plain(call.code)}` : call.ok === true ? "ok" : "—"],
          ["Duration", duration(call.durationMs as number)],
          ["Approval", approval ? approvalText(approval) : "not needed"],
        ]),
        h("h4", {}, "Arguments"),
        argsTable(envelope.args ?? (approval?.payload.argsPreview as unknown), approval?.payload.argsFields),
        h("h4", {}, "Result"),
        resultView(result),
      );
    }),
  );
}

function approvalText(decision: Decision): string {
  if (decision.status === "pending") return "waiting for a person";
  const resolution = decision.resolution ?? {};
  const verb =
    resolution.resolutionType === "approve"
      ? "Approved"
      : resolution.resolutionType === "reject"
        ? "Rejected"
        : plain(resolution.resolutionType);
  const by = typeof resolution.actor === "string" ? ` by ${resolution.actor}` : "";
  return `${decision.status === "resolved" ? verb : decision.status}${by}`;
}

function policy(trace: Rec): HTMLElement {
  const rows = recs(trace.policy).map((p) => [
    plain(p.gate),
    plain(p.outcome),
    plain(p.code),
    plain(p.detail),
    when(p.at as string),
  ]);
  return h(
    "div",
    { class: "scroll" },
    table("Policy gates", ["Gate", "Outcome", "Code", "Detail", "At"], rows, "No gate stopped or checked this run."),
  );
}

function messageList(messages: Message[]): HTMLElement {
  if (messages.length === 0) return h("p", { class: "state empty" }, "This run wrote no messages.");
  return h(
    "ol",
    { class: "messages" },
    ...messages.map((m) => h("li", { "data-kind": m.kind }, h("span", { class: "kind" }, m.kind), " ", messageText(m))),
  );
}

/** A tool result: its output's fields, or the failure's code and message. */
function resultView(result: Message | undefined): HTMLElement {
  if (!result) return h("p", { class: "muted" }, "No result recorded yet.");
  const envelope = (result.content ?? {}) as Rec;
  if (envelope.ok === false) {
    const error = (envelope.error ?? {}) as Rec;
    return h(
      "p",
      { class: "notice error" },
      `Failed: ${plain(error.code ?? envelope.status)} — ${plain(error.message ?? "")}`,
    );
  }
  return envelope.output !== undefined
    ? argsTable(envelope.output)
    : h("pre", { class: "result" }, plain(result.text ?? result.content, 2000));
}

/** A message in a line: tool calls and results by tool name, the rest by their text. */
function messageText(message: Message): string {
  const content = (message.content ?? {}) as Rec;
  const tool = plain(content.toolName ?? message.metadata.toolName);
  if (message.kind === "action") return `Called ${tool}`;
  if (message.kind === "toolResult")
    return `${tool}: ${content.ok === false ? "failed" : plain(content.status ?? "done")}`;
  return message.text ?? plain(message.content, 500);
}
