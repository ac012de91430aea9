/**
 * An agent's memory: each core slot with its shape and version, editable (optimistic concurrency:
 * the edit names the version it read); history counts and compaction state; full-text recall search.
 */
import type { Api } from "../../client";
import type { ViewContext } from "../context";
import { facts, field, h, replace, table } from "../ui/dom";
import { when } from "../ui/format";
import { failure, loading, notice } from "../ui/status";

type Agent = Api.Agent;
type AgentMemory = Api.AgentMemory;

/** The slots and the shape each accepts (as the API validates them). */
const SLOTS: Array<{ key: keyof AgentMemory["slots"] & string; shape: string; text: boolean }> = [
  { key: "primaryGoal", shape: "text, or empty to clear", text: true },
  { key: "activeTaskId", shape: "a task id, or empty to clear", text: true },
  { key: "openLoopIds", shape: 'JSON array of ids, e.g. ["t_1"]', text: false },
  { key: "preferenceByKey", shape: 'JSON object of strings, e.g. {"tone":"brief"}', text: false },
  { key: "extension", shape: "JSON object", text: false },
];

export async function memoryView(ctx: ViewContext, root: HTMLElement, agent: Agent): Promise<void> {
  replace(root, loading("memory"));
  const memory = await ctx.api.getMemory(agent.id, { signal: ctx.signal });
  if (ctx.signal.aborted) return;
  const slots = h("div", { class: "slots" });
  const reload = () => void memoryView(ctx, root, agent).catch((error: unknown) => replace(root, failure(error)));
  for (const slot of SLOTS) slots.append(slotEditor(ctx, agent.id, memory, slot, reload));
  replace(
    root,
    h("h2", {}, "Slots"),
    slots,
    h("h2", {}, "History and compaction"),
    facts([
      ["Messages", String(memory.counts.messages)],
      ["Summaries", String(memory.counts.summaries)],
      [
        "Compaction jobs",
        compactionText(memory.compaction),
      ],
      ["Latest summary", memory.compaction.latestSummaryMessageId ?? "none yet"],
    ]),
    recall(ctx, agent.id),
  );
}

function slotEditor(
  ctx: ViewContext,
  agentId: string,
  memory: AgentMemory,
  slot: (typeof SLOTS)[number],
  reload: () => void,
): HTMLElement {
  const value = memory.slots[slot.key];
  const version = memory.slots[`${slot.key}Version` as keyof AgentMemory["slots"]] as number;
  const input = slot.text
    ? h("input", { name: slot.key, value: typeof value === "string" ? value : "", autocomplete: "off" })
    : h("textarea", { name: slot.key, rows: 2, spellcheck: "false" }, JSON.stringify(value));
  const status = h("div", {});
  const form = h(
    "form",
    { class: "slot", "data-slot": slot.key },
    field(`${slot.key} (version ${version})`, input),
    h("p", { class: "muted small" }, `Shape: ${slot.shape}`),
    h("button", { type: "submit" }, `Save ${slot.key}`),
    status,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let next: unknown;
    try {
      next = slot.text ? input.value.trim() || null : JSON.parse(input.value);
    } catch {
      return replace(status, notice("That is not valid JSON.", "error"));
    }
    ctx.api
      .setMemorySlot(agentId, slot.key, { value: next, expectedVersion: version })
      .then((result) => {
        replace(status, notice(result.changed ? `Saved (version ${result.version}).` : "Unchanged."));
        setTimeout(reload, 600);
      })
      .catch((error: unknown) => replace(status, failure(error)));
  });
  return form;
}

function recall(ctx: ViewContext, agentId: string): HTMLElement {
  const query = h("input", { type: "search", name: "recall", autocomplete: "off" });
  const results = h("div", {});
  const form = h(
    "form",
    { class: "inline-form", role: "search" },
    field("Recall search", query),
    h("button", { type: "submit" }, "Search"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!query.value.trim()) return;
    replace(results, loading("matches"));
    ctx.api
      .searchMemory(agentId, { q: query.value.trim(), limit: 20 }, { signal: ctx.signal })
      .then((page) =>
        replace(
          results,
          table(
            "Recall matches",
            ["Kind", "Snippet", "Thread", "When"],
            page.data.map((hit) => [hit.kind, hit.snippet, hit.threadId, when(hit.createdAt)]),
            "Nothing in the messages or summaries matches.",
          ),
        ),
      )
      .catch((error: unknown) => replace(results, failure(error)));
  });
  return h("section", {}, h("h2", {}, "Recall"), form, results);
}

function compactionText(jobs: AgentMemory["compaction"]): string {
  return `${jobs.pending} pending · ${jobs.running} running · ${jobs.done} done · ${jobs.failedTerminal} failed`;
}
