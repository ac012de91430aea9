import { config } from "../../../config";
import type { WakeReason } from "../../../core/ids/run-keys";
import { selectCompanions } from "../../../core/wakes/coalescing";
import { selectMergedTurns } from "../../../core/wakes/double-texting";
import type { Agent } from "../../../schema/agents/agents";
import type { Run, RunStatus } from "../../../schema/agents/runs";
import { maxStepsFor } from "../delegation";
import { getTool } from "../../../tools/registry";
import { allowedTools, resolveAgentProfile } from "../../../tools/capabilities";
import { builtinTools } from "../../../tools/registry";
import { nowIso } from "../../shared/sqlite";
import { InjectedCrash } from "../../shared/seams";
import type { ActionStore, ToolCallRequest, ToolRunner, HttpToolGate } from "../tools";
import type { EventLog } from "../events";
import type { History } from "../memory";
import { buildPrompt, toModelMessages, toolSetFor } from "./model-steps";
import { parseSlots } from "../../../core/memory/slots";
import { withheldNeedles } from "../../../core/memory/extension-slots";
import { isGatewayError } from "../../../gateway/errors";
import type { ModelGateway } from "../../../gateway/model-gateway";
import type { AgentProfile } from "../lifecycle";
import { type InboxItem, type Interrupts, type WakeInbox, appendWakeInput, cascadeDepthOf, provenanceOf, runMessageIds, wakeContext, withWakePrompt } from "../wakes";
import type { RunTrace } from "./run-trace";
import type { RunGovernor } from "./governor";

export interface RunLoopDeps {
  events: EventLog;
  /** Per-run trace rows (provider attempts, policy decisions, usage). */
  trace: RunTrace;
  /** Brakes and daily budgets, consulted at run start and at every step boundary (src/objects/agent/budgets.ts). */
  governor?: RunGovernor;
  profile: AgentProfile;
  history: History;
  inbox: WakeInbox;
  actions: ActionStore;
  tools: ToolRunner;
  /** Every model call goes through the gateway (src/gateway/): inference gate, egress, retries, fallbacks. */
  model: ModelGateway;
  /** Test-only fault seam: throws at a named point when armed. */
  fault(point: string): void;
  /** Runs `work` in one SQLite transaction of the agent's storage: all of its writes commit, or none. */
  atomically<T>(work: () => T): T;
  /** The tenant's HTTP tools; offered to the model when the agent's profile allows them. */
  httpTools(): Promise<HttpToolGate[]>;
  /** Tells the tenant what a completed run changed (agent notifications for subscribers). */
  announce(activity: { stateRevision: number; messageIds: string[]; cascadeDepth: number }): void;
  /** Tells the tenant a run reached a terminal status (metrics counters), with the run's report (kept until the tenant answered). */
  recordOutcome?(outcome: { status: RunStatus; reason: string; toolCalls: number; inputTokens: number; outputTokens: number; costMicros?: number }): void;
  /** After each inbox item was handled (`parked`: the run waits for a saga): what the tenant must learn goes out in one report. */
  runSettled?(runKey: string, parked: boolean): void;
  /** Called once per terminal run, after its row is final (a child reports its delegated run to its parent). */
  runEnded?(run: Run): void;
  /** Memory (SPEC §7): the run's context — slots, report, summaries, hot messages — token-bounded (src/objects/agent/context.ts). */
  memoryContext?(threadId: string, runKey: string): import("ai").ModelMessage[];
  /** "Maybe compact" after a completed run; schedules work off the reply path (src/objects/agent/compaction.ts). */
  afterRun?(threadId: string): void;
  /** Double texting `interrupt` (issue 15 §4): runs marked to stop at their next step boundary. */
  interrupts?: Interrupts;
  waitUntil?(work: Promise<unknown>): void;
}

/**
 * Single-flight executor of the agent's wake inbox: one run at a time, oldest wake first; every
 * started run ends in exactly one terminal status. A run is a loop of steps (model call → tool
 * calls) whose position lives in SQLite: a run cut short by a crash resumes where it stopped, and a
 * run waiting for a saga is parked until the saga's phase 2 reports back.
 */
export class RunLoop {
  private draining: Promise<void> | null = null;

  constructor(private readonly deps: RunLoopDeps) {}

  /** Starts draining unless a drain is already under way; returns when the inbox is empty. */
  kick(): Promise<void> {
    this.draining ??= this.drain().finally(() => {
      this.draining = null;
    });
    return this.draining;
  }

  get busy(): boolean {
    return this.draining !== null;
  }

  private async drain(): Promise<void> {
    for (let next = this.deps.inbox.nextWithRun(); next; next = this.deps.inbox.nextWithRun()) {
      const { item } = next;
      const parked = await this.process(item, next.run);
      this.deps.runSettled?.(item.runKey, parked === true);
    }
  }

  /** Handles one inbox item (`run`: its run, read with it); true when its run parked on a saga. */
  private async process(item: InboxItem, run: Run | null): Promise<boolean | void> {
    const { inbox, profile, events } = this.deps;
    if (!run || inbox.isTerminal(run)) {
      inbox.finish(item.runKey, run?.status ?? "failed_terminal", { errorCode: run?.errorCode ?? "orphaned_wake" });
      return;
    }
    const agent = profile.get();
    const skip = this.skipReason(agent, item);
    if (skip) {
      // Nothing a person wrote is lost (issue 13): a person's wake settled unrun still leaves its text in the history.
      if (PERSON_WAKES.has(item.reason)) appendWakeInput(this.deps.history, item, item.threadId);
      return this.end(item, skip.status, skip.code, {});
    }
    // Brakes and budgets (helper "brakes"): a wake that never ran is skipped under a brake; a resumed run settles here.
    const held = await this.deps.governor?.check(agent!, item.runKey, run.status === "queued" ? "admission" : "step");
    if (held) return this.end(item, held.status, held.code, { stopReason: held.code, ...held.detail });
    // Double texting: a run not yet started, or resuming after its saga, is at a step boundary.
    if (this.interruptedBy(item)) {
      if (run.status === "queued" && PERSON_WAKES.has(item.reason)) appendWakeInput(this.deps.history, item, item.threadId);
      return this.interrupt(item, [], run.status === "queued" ? 0 : null, {});
    }

    const resumingAfterSaga = run.status === "ready";
    const started = inbox.markRunning(run, { countAttempt: !resumingAfterSaga });
    // A first attempt that is no saga's resumption never ran a step before: no step has a plan or a reply stored
    // yet, so its steps need not look for them (issue 12 §8), and it called tools only if a step here did.
    const fresh = !resumingAfterSaga && started.attempt === 1;
    if (!resumingAfterSaga) events.append("run.started", item.runKey, { runKey: item.runKey, reason: item.reason, threadId: item.threadId, attempt: started.attempt });
    if (started.attempt > config.run.maxAttempts) {
      return this.end(item, "failed_terminal", "interrupted_too_often", { attempts: started.attempt - 1 });
    }

    const waiting = inbox.pending(config.run.maxCoalescedWakes + 1);
    const merged = selectMergedTurns({ ...item, merge: false }, waiting.map((wake) => ({ ...wake, merge: wake.input.merge === true })), config.run.maxCoalescedWakes);
    const companions = merged.length > 0 ? merged : selectCompanions(item, waiting, config.run.maxCoalescedWakes);
    for (const companion of companions) inbox.markRunning(companion.runKey, { countAttempt: true });
    for (const turn of merged) events.append("turn.merged", turn.runKey, { runKey: turn.runKey, into: item.runKey, policy: "merge" });

    const startedAt = Date.now();
    const usage = { inputTokens: 0, outputTokens: 0 };
    let calledTools = false;
    const runtime = this.deps.governor?.runtimeMeter();
    try {
      for (const wake of [item, ...companions]) appendWakeInput(this.deps.history, wake, item.threadId);
      this.deps.fault("run.beforeModel");
      const maxSteps = maxStepsFor(agent!);
      for (let step = 0; step < maxSteps; step++) {
        // Brakes and budgets (helper "brakes"): every step boundary; the run settles here, its coalesced wakes with it.
        runtime?.tick();
        const halt = await this.deps.governor?.check(agent!, item.runKey, "step");
        if (halt) {
          for (const companion of companions) this.end(companion, halt.status, halt.code, { coalescedInto: item.runKey });
          this.end(item, halt.status, halt.code, this.trace(agent!, companions, step, usage, startedAt, started.attempt, { stopReason: halt.code, ...halt.detail }));
          return;
        }
        if (this.interruptedBy(item)) return this.interrupt(item, companions, step, this.trace(agent!, companions, step, usage, startedAt, started.attempt, {}));
        const outcome = await this.runStep(agent!, item, step, usage, fresh);
        if (outcome.kind !== "replied") calledTools = true;
        if (outcome.kind === "waiting") {
          inbox.park(item.runKey);
          events.append("run.waiting", item.runKey, { runKey: item.runKey, step });
          // Interrupted while this step asked for approvals: those are released too, so the run reaches its boundary.
          if (this.interruptedBy(item)) this.deps.waitUntil?.(this.deps.interrupts!.onParked(item.runKey).catch(() => undefined));
          return true;
        }
        if (outcome.kind === "replied") {
          this.deps.fault("run.afterReply");
          const state = profile.recordWake(nowIso(), outcome.messageId, false);
          events.append("state.changed", item.runKey, { state });
          for (const companion of companions) this.end(companion, "completed", null, { coalescedInto: item.runKey, replyMessageId: outcome.messageId });
          this.end(item, "completed", null, this.trace(agent!, companions, step + 1, usage, startedAt, started.attempt, { replyMessageId: outcome.messageId }), fresh && !calledTools ? 0 : undefined);
          this.deps.announce({ stateRevision: state.revision, messageIds: [outcome.messageId], cascadeDepth: cascadeDepthOf(item) + 1 });
          return;
        }
      }
      for (const companion of companions) this.end(companion, "completed", null, { coalescedInto: item.runKey });
      this.end(item, "completed", null, this.trace(agent!, companions, maxSteps, usage, startedAt, started.attempt, { stopReason: "max_steps" }));
    } catch (error) {
      if (error instanceof InjectedCrash) throw error;
      const code = errorCode(error);
      profile.recordWake(nowIso(), null, true);
      const detail = String((error as Error)?.message ?? error).slice(0, 500);
      for (const companion of companions) this.end(companion, "failed_terminal", code, { coalescedInto: item.runKey, error: detail });
      this.end(item, "failed_terminal", code, { latencyMs: Date.now() - startedAt, error: detail });
    } finally {
      runtime?.tick();
    }
  }

  /** One step: reuse a persisted plan if this step already called tools, else ask the model. */
  private async runStep(agent: Agent, item: InboxItem, step: number, usage: { inputTokens: number; outputTokens: number }, fresh: boolean): Promise<{ kind: "replied"; messageId: string } | { kind: "tools" } | { kind: "waiting" }> {
    const { actions, history, events } = this.deps;
    let calls: ToolCallRequest[] = fresh ? [] : actions.forStep(item.runKey, step).map((action) => ({ toolCallId: action.toolCallId, toolName: action.toolName, input: action.envelope.args }));
    if (calls.length === 0) {
      const stored = fresh ? undefined : history.get(runMessageIds.reply(item.runKey, step));
      if (stored && stored.metadata.final === true) return { kind: "replied", messageId: stored.id };
      const output = await this.deps.model
        .step({
          agent,
          runKey: item.runKey,
          step,
          wake: wakeContext(item),
          system: agent.config.instructions,
          messages: this.prompt(item, step),
          withheld: this.withheld(),
          // Built only if the model reads tools (the gateway asks; `builtin:echo` does not).
          tools: async () => toolSetFor(this.offeredTools(agent, item), await this.offeredHttpTools(agent, item)),
          onDelta: (delta) => events.live("text.delta", item.runKey, { runKey: item.runKey, delta, step }),
        })
        .catch((error: unknown) => {
          // Tell the user what was denied or failed (the gateway's message names no secret).
          if (isGatewayError(error)) history.append({ id: runMessageIds.modelFailure(item.runKey, step), threadId: item.threadId, kind: "system", text: error.message, runKey: item.runKey, metadata: { step, code: error.code } });
          throw error;
        });
      usage.inputTokens += output.usage.inputTokens;
      usage.outputTokens += output.usage.outputTokens;
      const final = output.toolCalls.length === 0;
      if (output.text || final) {
        const { message } = history.append({ id: runMessageIds.reply(item.runKey, step), threadId: item.threadId, kind: "assistant", text: output.text, runKey: item.runKey, metadata: { step, final } });
        if (final) return { kind: "replied", messageId: message.id };
      }
      calls = output.toolCalls;
    }
    const outcome = await this.deps.tools.runStep({ agent, runKey: item.runKey, reason: item.reason, threadId: item.threadId, step, inputTrust: provenanceOf(item).trust }, calls);
    return outcome === "waiting" ? { kind: "waiting" } : { kind: "tools" };
  }

  /** What the provider request must not carry: the strings of extension values not marked `modelVisible`. */
  private withheld() {
    const slots = parseSlots(this.deps.profile.state()?.slots ?? {});
    return slots.ok ? withheldNeedles(slots.slots, this.deps.governor?.modelVisibility() ?? {}) : [];
  }

  private prompt(item: InboxItem, step: number) {
    const context = this.deps.memoryContext
      ? this.deps.memoryContext(item.threadId, item.runKey)
      : toModelMessages(this.deps.history.window(item.threadId, config.run.contextWindowMessages), item.runKey);
    const history = withWakePrompt(context, item);
    const priorSteps = [];
    for (let earlier = 0; earlier < step; earlier++) {
      const interim = this.deps.history.get(runMessageIds.reply(item.runKey, earlier));
      priorSteps.push({ text: interim?.text ?? null, actions: this.deps.actions.forStep(item.runKey, earlier) });
    }
    return buildPrompt(history, priorSteps);
  }

  /** The registry tools this agent may call on this wake (capability profile × wake reason). */
  private offeredTools(agent: Agent, item: InboxItem) {
    return allowedTools(resolveAgentProfile(agent.kind, agent.config.capabilities ?? undefined), builtinTools, item.reason).filter((tool) => getTool(tool.name));
  }

  private async offeredHttpTools(agent: Agent, item: InboxItem) {
    const tools = await this.deps.httpTools().catch(() => []);
    return allowedTools(resolveAgentProfile(agent.kind, agent.config.capabilities ?? undefined), tools, item.reason).map((tool) => ({ modelName: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
  }

  private trace(agent: Agent, companions: InboxItem[], steps: number, usage: Record<string, number>, startedAt: number, attempt: number, extra: Record<string, unknown>) {
    return {
      coalescedRunKeys: companions.map((companion) => companion.runKey),
      steps,
      model: agent.config.modelId,
      usage,
      latencyMs: Date.now() - startedAt,
      attempt,
      resumed: attempt > 1,
      ...extra,
    };
  }

  private skipReason(agent: Agent | null, item: InboxItem): { status: RunStatus; code: string } | null {
    if (!agent || agent.lifecycle === "destroyed") return { status: "skipped_destroyed", code: "agent_destroyed" };
    if (agent.lifecycle !== "active") return { status: "skipped_sleeping", code: `agent_${agent.lifecycle}` };
    // `sleep` skips autonomous wakes only (the tool's own contract): a person's message or answer wakes the agent.
    if (PERSON_WAKES.has(item.reason)) return null;
    const sleepUntil = this.deps.profile.state()?.sleepUntil;
    if (sleepUntil && Date.parse(sleepUntil) > Date.now()) return { status: "skipped_sleeping", code: "sleeping" };
    return null;
  }

  /** The wake as read carries any mark written before; the inbox remembers those written since (no read per step). */
  private interruptedBy(item: InboxItem): string | null {
    return this.deps.interrupts?.of(item.runKey) ?? null;
  }

  /** Ends a marked run (and the turns merged into it) as `interrupted`: what it did so far stays in the thread. */
  private interrupt(item: InboxItem, companions: InboxItem[], step: number | null, trace: Record<string, unknown>): void {
    const by = this.interruptedBy(item);
    this.deps.events.append("run.interrupted", item.runKey, { runKey: item.runKey, interruptedBy: by, step });
    for (const companion of companions) this.end(companion, "interrupted", "interrupted", { coalescedInto: item.runKey, interruptedBy: by });
    this.end(item, "interrupted", "interrupted", { ...trace, stopReason: "interrupted", interruptedBy: by });
  }

  /** `knownToolCalls`: the run's tool calls when the loop knows them (a fresh run that called none), else counted. */
  private end(item: InboxItem, status: RunStatus, code: string | null, trace: Record<string, unknown>, knownToolCalls?: number): void {
    const type = status === "failed_terminal" ? "run.failed" : "run.completed";
    // The terminal state and its terminal event commit together: a reader never sees one without the other, and a
    // throw between them leaves the run where it was (its wake still in the inbox, resumed like any cut-off run).
    const { run, traceRows } = this.deps.atomically(() => {
      const ended = this.deps.inbox.finishWithTrace(item.runKey, status, { errorCode: code, trace: { reason: item.reason, ...trace } });
      this.deps.fault("run.beforeTerminalEvent");
      this.deps.events.append(type, item.runKey, { runKey: item.runKey, status, errorCode: code, run: ended.run });
      return ended;
    });
    if (this.deps.recordOutcome) {
      const usage = (trace.usage ?? {}) as { inputTokens?: number; outputTokens?: number };
      let toolCalls = knownToolCalls ?? 0;
      if (knownToolCalls === undefined) for (let step = 0, n = 1; n > 0 && step < config.run.maxStepsPerRun; step++) toolCalls += n = this.deps.actions.forStep(item.runKey, step).length;
      // The cost as RunTrace.view sums it, from the rows the end just read (no second read of them).
      this.deps.recordOutcome({ status, reason: item.reason, toolCalls, inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0, costMicros: costOf(traceRows) });
    }
    // Delegation: a child's delegated run reports to its parent (src/objects/agent/child-report.ts).
    this.deps.runEnded?.(run);
    if (status === "completed") this.deps.afterRun?.(item.threadId);
  }
}

/**
 * Wakes a person caused: a user message, an operator's manual wake, the answer to an ask_user question.
 * They run while the agent sleeps (docs/decisions.md "Edges (issue 13)").
 */
const PERSON_WAKES: ReadonlySet<WakeReason> = new Set<WakeReason>(["userInitiated", "manual", "toolResult"]);


function errorCode(error: unknown): string {
  if (error && typeof error === "object" && "code" in error && typeof error.code === "string") return error.code;
  return "run_error";
}

/** The cost of a run's usage rows, as `RunTrace.view` totals it (a row without one adds nothing). */
function costOf(rows: ReadonlyArray<{ kind: string; data: Record<string, unknown> }>): number {
  let cost = 0;
  for (const row of rows) if (row.kind === "usage") cost += (row.data as { costMicros?: number }).costMicros ?? 0;
  return cost;
}
