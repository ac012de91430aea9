/** An agent's conversations: its recent messages grouped by thread (a session's share one), newest thread first. */
import type { Api } from "../../client";
import type { ViewContext } from "../context";
import { h, replace } from "../ui/dom";
import { plain, when } from "../ui/format";
import { empty, loading } from "../ui/status";

type Agent = Api.Agent;
type Message = Api.Message;

export async function conversationsView(ctx: ViewContext, root: HTMLElement, agent: Agent): Promise<void> {
  replace(root, loading("conversations"));
  const page = await ctx.api.listMessages(agent.id, { limit: 200 }, { signal: ctx.signal });
  if (ctx.signal.aborted) return;
  const threads = new Map<string, Message[]>();
  for (const message of page.data) threads.set(message.threadId, [...(threads.get(message.threadId) ?? []), message]);
  if (threads.size === 0)
    return replace(
      root,
      empty("No conversations yet: messages appear here once someone writes to the agent or it wakes."),
    );
  replace(
    root,
    h("h2", {}, "Conversations"),
    h("p", { class: "muted" }, `The ${page.data.length} most recent messages, by thread.`),
    ...[...threads].map(([threadId, messages]) =>
      h(
        "details",
        { class: "panel thread", open: threads.size <= 3 },
        h("summary", {}, `Thread ${threadId} · ${messages.length} messages · last ${when(messages[0]?.createdAt)}`),
        h(
          "ol",
          { class: "messages" },
          ...messages
            .slice()
            .reverse()
            .map((m) =>
              h(
                "li",
                { "data-kind": m.kind },
                h("span", { class: "kind" }, m.kind),
                " ",
                m.text ?? plain(m.content, 400),
              ),
            ),
        ),
      ),
    ),
  );
}
