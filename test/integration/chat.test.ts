import { SELF } from "cloudflare:test";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { widgetSessionId } from "../../src/core/runtime/widget-session";
import { TestChat } from "../support/test-chat";
import { api, createAgent, createTaskCommand, createTenant, eventually, playbookAgentInCategory, taskTitlesIn } from "./helpers";

/** The AI SDK's own chat client (AbstractChat + DefaultChatTransport) against the real Worker and Durable Objects. */
function chatWith(agentId: string, token: string, options: { chatId?: string; onlyLast?: boolean } = {}) {
  const transport = new DefaultChatTransport<UIMessage>({
    api: `https://vigil.test/v1/agents/${agentId}/chat`,
    headers: { authorization: `Bearer ${token}` },
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => SELF.fetch(input as string, init)) as typeof fetch,
    ...(options.onlyLast ? { prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, messages: messages.slice(-1) } }) } : {}),
  });
  return new TestChat({ id: options.chatId ?? `chat-${crypto.randomUUID().slice(0, 8)}`, transport, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
}

const textOf = (message: UIMessage | undefined) => (message?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
const toolPart = (message: UIMessage | undefined) => message?.parts.find((part) => part.type === "dynamic-tool") as any;

describe("POST /v1/agents/:id/chat speaks the AI SDK's UI message stream", () => {
  it("streams a reply as UI message chunks the SDK's chat client assembles into an assistant message", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const chat = chatWith(agent.id, key);
    await chat.sendMessage({ text: "hello there" });
    expect(chat.error).toBeUndefined();
    expect(chat.status).toBe("ready");
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(textOf(chat.lastMessage)).toBe("echo: hello there");
  });

  it("answers with the protocol's header, SSE data lines and the [DONE] terminator", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const body = { id: "raw-chat", messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "ping" }] }] };
    const res = await api("POST", `/v1/agents/${agent.id}/chat`, { key, body });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const lines = String(res.body).split("\n\n").filter(Boolean);
    expect(lines.at(-1)).toBe("data: [DONE]");
    const chunks = lines.slice(0, -1).map((line) => JSON.parse(line.replace(/^data: /, "")));
    expect(chunks[0]).toMatchObject({ type: "start" });
    expect(chunks.filter((c) => c.type === "text-delta").map((c) => c.delta).join("")).toBe("echo: ping");
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
  });

  it("keeps the history in the agent's session named by the chat id, when the client sends only the new message", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const chat = chatWith(agent.id, key, { chatId: "kept-history", onlyLast: true });
    await chat.sendMessage({ text: "first" });
    await chat.sendMessage({ text: "second" });
    expect(textOf(chat.lastMessage)).toBe("echo: second");
    const history = await api("GET", `/v1/agents/${agent.id}/messages?sessionId=kept-history`, { key });
    const texts = (history.body.data as any[]).reverse().map((m) => `${m.kind}:${m.text}`);
    expect(texts).toEqual(["user:first", "assistant:echo: first", "user:second", "assistant:echo: second"]);
  });

  it("a resent user message (same message id) replays its run rather than starting a second one", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const body = { id: "resent", messages: [{ id: "same-id", role: "user", parts: [{ type: "text", text: "once" }] }] };
    await api("POST", `/v1/agents/${agent.id}/chat`, { key, body });
    const again = await api("POST", `/v1/agents/${agent.id}/chat`, { key, body });
    expect(String(again.body)).toContain('"delta":"echo: once"');
    const runs = await api("GET", `/v1/agents/${agent.id}/runs`, { key });
    expect(runs.body.data).toHaveLength(1);
  });

  it("a tool call waiting for a person is a tool-approval-request; the SDK's approval response resolves that decision", async () => {
    const { key, agent, categoryId } = await playbookAgentInCategory("orchestrator");
    const chat = chatWith(agent.id, key);
    await chat.sendMessage({ text: createTaskCommand(categoryId, "Run 5k") });
    const requested = toolPart(chat.lastMessage);
    expect(requested).toMatchObject({ type: "dynamic-tool", toolName: "create_task", state: "approval-requested", input: { title: "Run 5k", categoryId } });
    const pending = await api("GET", `/v1/decisions?status=pending&agentId=${agent.id}`, { key });
    expect(pending.body.data.map((d: any) => d.id)).toEqual([requested.approval.id]);
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);

    chat.addToolApprovalResponse({ id: requested.approval.id, approved: true });
    const done = await eventually(async () => (chat.status === "ready" && toolPart(chat.lastMessage)?.state === "output-available" ? chat.lastMessage : undefined));
    expect(chat.error).toBeUndefined();
    expect(toolPart(done).output).toMatchObject({ task: { title: "Run 5k" } });
    expect(textOf(done)).toBe("done: Run 5k");
    expect(await taskTitlesIn(key, categoryId)).toEqual(["Run 5k"]);
    const decision = (await api("GET", `/v1/decisions?agentId=${agent.id}`, { key })).body.data[0];
    expect(decision).toMatchObject({ id: requested.approval.id, status: "resolved", resolution: { resolutionType: "approve", resolvedBy: "human" } });
  });

  it("a denied approval rejects the decision and the tool part ends output-denied, nothing executed", async () => {
    const { key, agent, categoryId } = await playbookAgentInCategory("orchestrator");
    const chat = chatWith(agent.id, key);
    await chat.sendMessage({ text: createTaskCommand(categoryId, "Swim") });
    const requested = toolPart(chat.lastMessage);
    chat.addToolApprovalResponse({ id: requested.approval.id, approved: false, reason: "not today" });
    await eventually(async () => chat.status === "ready" && toolPart(chat.lastMessage)?.state === "output-denied");
    expect(chat.error).toBeUndefined();
    expect(await taskTitlesIn(key, categoryId)).toEqual([]);
    const decision = (await api("GET", `/v1/decisions?agentId=${agent.id}`, { key })).body.data[0];
    expect(decision).toMatchObject({ status: "resolved", resolution: { resolutionType: "reject", rationale: "not today" } });
  });

  it("a widget token's chat ids name sessions inside its own visitor namespace", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const token = (await api("POST", "/v1/tokens", { key, body: { sub: "visitor-c", agents: [agent.id], ttlSeconds: 600 } })).body.token as string;
    const chat = chatWith(agent.id, token, { chatId: "support" });
    await chat.sendMessage({ text: "hi from the page" });
    expect(textOf(chat.lastMessage)).toBe("echo: hi from the page");
    const own = await api("GET", `/v1/agents/${agent.id}/messages?sessionId=${widgetSessionId("visitor-c", "support")}`, { key });
    expect(own.body.data.map((m: any) => m.text)).toContain("hi from the page");
    const bare = await api("GET", `/v1/agents/${agent.id}/messages?sessionId=support`, { key });
    expect(bare.body.data).toEqual([]);
  });

  it("refuses a request whose last message carries nothing to act on, as a problem", async () => {
    const { key } = await createTenant();
    const agent = await createAgent(key, { model: "builtin:echo" });
    const body = { id: "empty", messages: [{ id: "a1", role: "assistant", parts: [{ type: "text", text: "hi" }] }] };
    const res = await api("POST", `/v1/agents/${agent.id}/chat`, { key, body });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.code).toBe("validation_failed");
  });
});
