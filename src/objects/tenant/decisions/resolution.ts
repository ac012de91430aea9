import type { Env } from "../../../env";
import { agentStub } from "../../shared/stubs";
import type { Approvals } from "./approvals";
import type { BrakeDecisionOutcome, BrakeDecisions } from "./brake-decisions";
import type { TenantBrakes } from "../governance";
import { answerWake, type DecisionAnswer, type Decisions, type ResolveBody, type ResolveOutcome } from "./decisions";
import type { EventFeed } from "../channels";

export interface DecisionResolutionDeps {
  env: Env;
  tenantId(): string;
  decisions: Decisions;
  brakeDecisions: BrakeDecisions;
  brakes: TenantBrakes;
  approvals: Approvals;
  feed: EventFeed;
}

/**
 * A person resolves a decision. A brake's keep/release decision may release its brake and wakes no
 * agent; an ask_user decision (row + audit in one transaction) wakes the asking agent once with
 * reason toolResult and the answer as an observation (runKey = runKeys.toolResult(agent, operationId),
 * so a repeat dedupes); a tool approval wakes its waiting saga.
 */
export class DecisionResolution {
  constructor(private readonly deps: DecisionResolutionDeps) {}

  async resolve(actor: string, id: string, body: ResolveBody, visibleAgents?: string[]): Promise<ResolveOutcome | BrakeDecisionOutcome> {
    const { decisions, brakeDecisions, brakes, approvals, feed } = this.deps;
    const brakeOutcome = brakeDecisions.resolve(actor, id, body, visibleAgents);
    if (brakeOutcome) {
      if (brakeOutcome.ok) brakes.decisionResolved(id, brakeOutcome.chosenOptionId, actor);
      return brakeOutcome;
    }
    const outcome = decisions.resolve(id, body, actor, visibleAgents);
    if (outcome.ok && outcome.answer) {
      const { decisionId, resolutionType, chosenOptionId, answerText } = outcome.answer.data;
      await feed.recordTenantEvent("decision.resolved", outcome.answer.agentId, outcome.answer.runKey, { decisionId, kind: "ask_user", resolutionType, chosenOptionId, answerText, actor });
      await this.deliverAnswer(id, outcome.answer);
    } else if (outcome.ok && outcome.saga) {
      // No tenant-level event here: the agent's saga appends `decision.resolved` (every path, timeouts included), which reaches the tenant stream.
      await approvals.wakeSaga(outcome.saga.operationId);
    } else if (!outcome.ok && outcome.code === "decision_not_pending") {
      if (outcome.answer) await this.deliverAnswer(id, outcome.answer);
      if (outcome.saga) await approvals.wakeSaga(outcome.saga.operationId);
    }
    return outcome;
  }

  /** Wakes the asking agent with the answer; idempotent by its runKey, so re-sending is safe. */
  private async deliverAnswer(id: string, answer: DecisionAnswer): Promise<void> {
    const tenantId = this.deps.tenantId();
    const woke = await agentStub(this.deps.env, tenantId, answer.agentId).enqueueWake(answerWake(tenantId, answer));
    if (!woke.ok) console.error(JSON.stringify({ level: "error", msg: "decision answer wake failed", agentId: answer.agentId, decisionId: id, code: woke.code }));
  }
}
