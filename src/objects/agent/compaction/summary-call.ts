import { completeText } from "../../../gateway/complete-text";
import type { GatewayEnv, GrantSource, TraceSink } from "../../../gateway/gateway";
import { H } from "../../../core/ids/hash";
import type { Agent } from "../../../schema/agents/agents";

export interface SummaryCallDeps {
  env: GatewayEnv;
  /** The agent whose history is summarized (it exists while its compaction runs). */
  agent: () => Agent;
  /** The run governor's step check: a spent budget or a brake answers a halt. */
  check: (agent: Agent, traceKey: string) => Promise<{ code: string } | null>;
  grants: () => GrantSource;
  trace: TraceSink;
}

/**
 * A compaction summary's model call: metered like a run step (its usage counts toward the day's budget) under a key
 * of its own. A spent budget or a brake is the seed's "budget gate": it throws, and the summary takes the extractive path.
 */
export function summaryModelCall(deps: SummaryCallDeps): (request: { system: string; prompt: string }) => Promise<string> {
  return async ({ system, prompt }) => {
    const agent = deps.agent();
    const traceKey = `compaction:${H(system, prompt)}`;
    const halt = await deps.check(agent, traceKey);
    if (halt) throw Object.assign(new Error(halt.code), { code: halt.code });
    const output = await completeText({ env: deps.env, grants: deps.grants(), agent, purpose: "compaction", system, messages: [{ role: "user", content: prompt }], trace: { runKey: traceKey, sink: deps.trace } });
    return output.text;
  };
}
