import { tokens, type TypedToken } from "../../core/tokens";
import type { Agent } from "../../schema/agents";

/** Tokens of an agent notification: its semantic keys, its id, and kind/lifecycle subtypes to filter on. */
export function agentTokens(agent: Pick<Agent, "id" | "kind" | "lifecycle">, semanticKeys: string[]): TypedToken[] {
  return [
    ...semanticKeys.map((key) => tokens.semanticKey(key)),
    tokens.entityId(agent.id),
    tokens.subtype("agent.kind", agent.kind),
    tokens.subtype("agent.lifecycle", agent.lifecycle),
  ];
}
