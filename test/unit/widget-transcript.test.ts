import { describe, expect, it } from "vitest";
import { answerLine } from "../../src/widget/decision-card";
import { decisionView } from "../../src/widget/decision-view";
import { Transcript, type ChatEvent, type ChatMessage } from "../../src/widget/transcript";

const THREAD = "ag_1:session:default";
let seq = 0;
const msg = (id: string, kind: string, text: string | undefined, extra: Partial<ChatMessage> = {}): ChatMessage => ({ id, threadId: THREAD, kind, text, createdAt: "2026-01-01T00:00:00.000Z", metadata: {}, ...extra });
const appended = (message: ChatMessage, runKey: string): ChatEvent => ({ seq: ++seq, type: "message.appended", runKey, data: { message } });
const delta = (runKey: string, text: string, step = 0): ChatEvent => ({ seq: null, type: "text.delta", runKey, data: { runKey, delta: text, step } });
const shown = (t: Transcript) => t.entries.map((e) => (e.type === "message" ? `${e.role}:${e.text}` : e.type === "draft" ? `draft:${e.text}` : e.type === "tool" ? `tool:${e.toolName}:${e.status}` : e.type === "decision" ? `decision:${e.decision.status}` : `error:${e.text}`));

describe("widget transcript", () => {
  it("shows history oldest first, only this thread, and never a message twice", () => {
    const t = new Transcript(THREAD);
    t.addHistory([msg("m2", "assistant", "echo: hi"), msg("x", "user", "elsewhere", { threadId: "ag_1:session:other" }), msg("m1", "user", "hi"), msg("t", "thought", "hidden")]);
    expect(shown(t)).toEqual(["user:hi", "assistant:echo: hi"]);
    expect(t.apply(appended(msg("m2", "assistant", "echo: hi"), "r0"))).toBe(false);
    t.addHistory([msg("m0", "user", "older")]);
    expect(shown(t)).toEqual(["user:older", "user:hi", "assistant:echo: hi"]);
  });

  it("streams deltas of its own runs into a draft that the final reply replaces in place", () => {
    const t = new Transcript(THREAD);
    expect(t.apply(delta("foreign", "ignored"))).toBe(false);
    t.ownRun("r1");
    t.apply(appended(msg("u1", "user", "tell me"), "r1"));
    t.apply(delta("r1", "echo: "));
    t.apply(delta("r1", "tell "));
    expect(shown(t)).toEqual(["user:tell me", "draft:echo: tell "]);
    const draftVersion = t.entries[1]!.version;
    t.apply(delta("r1", "me"));
    expect(t.entries[1]!.version).toBeGreaterThan(draftVersion);
    t.apply(appended(msg("a1", "assistant", "echo: tell me"), "r1"));
    expect(shown(t)).toEqual(["user:tell me", "assistant:echo: tell me"]);
    expect(t.pendingRuns.has("r1")).toBe(true);
    t.apply({ seq: ++seq, type: "run.completed", runKey: "r1", data: {} });
    expect(t.pendingRuns.size).toBe(0);
  });

  it("a run seen writing into this thread is its own (e.g. the run a decision's answer wakes)", () => {
    const t = new Transcript(THREAD);
    t.apply(appended(msg("o1", "observation", "answer to Which day?: Monday"), "r2"));
    t.apply(delta("r2", "Booked"));
    expect(shown(t)).toEqual(["note:answer to Which day?: Monday", "draft:Booked"]);
  });

  it("one line per tool call, from the messages or the events, whichever comes first", () => {
    const t = new Transcript(THREAD);
    t.ownRun("r3");
    t.apply({ seq: ++seq, type: "tool.called", runKey: "r3", data: { operationId: "op1", toolName: "ask_user" } });
    t.apply(appended(msg("act", "action", undefined, { metadata: { operationId: "op1", toolName: "ask_user" } }), "r3"));
    t.apply(appended(msg("res", "toolResult", undefined, { metadata: { operationId: "op1", toolName: "ask_user", ok: true } }), "r3"));
    t.apply({ seq: ++seq, type: "tool.result", runKey: "r3", data: { operationId: "op1", toolName: "ask_user", ok: true } });
    expect(shown(t)).toEqual(["tool:ask_user:ok"]);
    t.apply({ seq: ++seq, type: "tool.result", runKey: "r3", data: { operationId: "op2", toolName: "http", ok: false, code: "network_denied" } });
    expect(t.entries[1]).toMatchObject({ status: "failed", code: "network_denied" });
  });

  it("a failed run drops its draft and says so", () => {
    const t = new Transcript(THREAD);
    t.ownRun("r4");
    t.apply(delta("r4", "half"));
    t.apply({ seq: ++seq, type: "run.failed", runKey: "r4", data: {} });
    expect(shown(t)).toEqual(["error:The agent could not finish this reply."]);
  });

  it("a POST answered after its run ended does not leave the reply indicator on", () => {
    const t = new Transcript(THREAD);
    t.apply({ seq: ++seq, type: "run.completed", runKey: "r5", data: {} });
    t.ownRun("r5");
    expect(t.pendingRuns.size).toBe(0);
  });

  it("decisions: shown once, completed by the listed record, closed when answered or gone", () => {
    const t = new Transcript(THREAD);
    t.apply({ seq: ++seq, type: "decision.requested", runKey: "r6", data: { decisionId: "d1", kind: "ask_user", question: "Which day?", options: [{ id: "mon", label: "Monday" }] } });
    expect(t.upsertDecision({ id: "d1", status: "pending", type: "decision/option", payload: { kind: "ask_user", question: "Which day?", options: [{ id: "mon", label: "Monday" }], allowFreeText: false, threadId: THREAD } })).toBe(true);
    expect(t.upsertDecision({ id: "d9", status: "pending", payload: { question: "Other thread", threadId: "ag_1:session:other" } })).toBe(false);
    expect(shown(t)).toEqual(["decision:pending"]);
    expect(t.entries[0]).toMatchObject({ decision: { title: "Which day?", allowFreeText: false, actions: [{ label: "Monday", resolution: { resolutionType: "choose_option", chosenOptionId: "mon" } }] } });
    expect(t.closeDecision("d1", "resolved", "Monday")).toBe(true);
    expect(t.upsertDecision({ id: "d1", status: "pending", payload: { question: "Which day?" } })).toBe(true);
    expect(t.entries[0]).toMatchObject({ decision: { status: "resolved", answer: "Monday" } });
    t.upsertDecision({ id: "d2", status: "pending", payload: { question: "Still?" } });
    expect(t.reconcilePending(new Set())).toBe(true);
    expect(t.entries[1]).toMatchObject({ decision: { status: "closed" } });
  });
});

describe("decision view", () => {
  it("renders any decision type from its payload: options as choices, otherwise approve / reject", () => {
    expect(decisionView({ id: "d", type: "decision/tool_approval", status: "pending", payload: { kind: "tool_approval", toolName: "delete_task", argsPreview: { taskId: "t1" }, recommendation: "approve" } })).toMatchObject({
      title: "Allow delete_task?",
      detail: null,
      fields: [{ label: "taskId", value: "t1" }],
      allowFreeText: false,
      actions: [{ label: "Approve", resolution: { resolutionType: "approve" }, recommended: true }, { label: "Reject", resolution: { resolutionType: "reject" }, recommended: false }],
    });
    expect(decisionView({ id: "d", type: "decision/option", payload: { question: "Q", options: [{ id: "a" }, { id: "b", label: "Bee" }], recommendedOptionId: "b" } })?.actions).toEqual([
      { label: "a", resolution: { resolutionType: "choose_option", chosenOptionId: "a" }, recommended: false },
      { label: "Bee", resolution: { resolutionType: "choose_option", chosenOptionId: "b" }, recommended: true },
    ]);
    expect(decisionView({ id: "d", status: "resolved", payload: { options: [{ id: "b", label: "Bee" }] }, resolution: { resolutionType: "choose_option", chosenOptionId: "b" } })).toMatchObject({ status: "resolved", answer: "Bee" });
    expect(decisionView({ payload: {} })).toBeNull();
  });

  it("shows a tool approval's arguments as the server's labelled fields", () => {
    const argsFields = [
      { key: "newTaskTitle", label: "New task title", value: "Follow up: Run 5k" },
      { key: "carry", label: "Carry", value: { items: 2 } },
    ];
    const view = decisionView({ id: "d", type: "decision/tool_approval", payload: { toolName: "create_follow_up_task", argsPreview: {}, argsFields } });
    expect(view?.fields).toEqual([
      { label: "New task title", value: "Follow up: Run 5k" },
      { label: "Carry", value: '{"items":2}' },
    ]);
  });
});

describe("decision answers, however the widget learns them", () => {
  const approval = (id: string) => ({ id, status: "pending", type: "decision/tool_approval", payload: { toolName: "create_task", threadId: THREAD } });

  it("from the decision.resolved event: Approved or Rejected", () => {
    const t = new Transcript(THREAD);
    t.upsertDecision(approval("a1"));
    t.upsertDecision(approval("a2"));
    t.apply({ seq: ++seq, type: "decision.resolved", runKey: "r", data: { decisionId: "a1", kind: "tool_approval", resolutionType: "approve" } });
    t.apply({ seq: ++seq, type: "decision.resolved", runKey: "r", data: { decisionId: "a2", kind: "tool_approval", resolutionType: "reject" } });
    const lines = t.entries.map((entry) => (entry.type === "decision" ? answerLine(entry.decision) : ""));
    expect(lines).toEqual(["Approved", "Rejected"]);
  });

  it("from the listed record when it was answered elsewhere; a listed answer never adds a card", () => {
    const t = new Transcript(THREAD);
    t.upsertDecision(approval("a1"));
    const listed = { ...approval("a1"), status: "resolved", resolution: { resolutionType: "reject" } };
    expect(t.settleDecision(listed)).toBe(true);
    expect(t.settleDecision({ ...listed, id: "unseen" })).toBe(false);
    expect(t.entries.map((entry) => (entry.type === "decision" ? answerLine(entry.decision) : ""))).toEqual(["Rejected"]);
  });

  it("from an option's event: the chosen option's label", () => {
    const t = new Transcript(THREAD);
    t.upsertDecision({ id: "q", status: "pending", payload: { question: "Day?", options: [{ id: "mon", label: "Monday" }], threadId: THREAD } });
    t.apply({ seq: ++seq, type: "decision.resolved", runKey: "r", data: { decisionId: "q", resolutionType: "choose_option", chosenOptionId: "mon" } });
    const entry = t.entries[0]!;
    expect(entry.type === "decision" && answerLine(entry.decision)).toBe("Answered: Monday");
  });
});

describe("system lines", () => {
  it("an observation shows the server's title (names, not ids) when it has one", () => {
    const t = new Transcript(THREAD);
    t.addHistory([
      msg("o1", "observation", "TASK changed: task t_1 (categoryId c_1)", { metadata: { title: "Task “Run 5k” changed in “Demo”" } }),
      msg("o0", "observation", "WORKOUT changed (event gym-app)"),
    ]);
    expect(shown(t)).toEqual(["note:WORKOUT changed (event gym-app)", "note:Task “Run 5k” changed in “Demo”"]);
  });
});
