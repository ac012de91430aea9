import type { ModelMessage, ToolSet } from "ai";
import type { WakeContext } from "./resolve";
import type { Agent } from "../schema/agents/agents";
import { infer, type GatewayEnv, type GrantSource, type InferenceOutput, type TraceSink } from "./gateway";

export interface ModelStepCall {
  agent: Agent;
  runKey: string;
  /** The run step; recorded with the call's attempts and usage (the trace export's step spans). */
  step?: number;
  wake: WakeContext;
  system: string | null;
  messages: ModelMessage[];
  /** The offer, or its builder (called only for a model that reads tools: ./gateway.ts `InferenceInput.tools`). */
  tools: ToolSet | (() => Promise<ToolSet>);
  onDelta: (delta: string) => void;
  /** Strings the request's bytes must not carry (withheld extension slot values); one found blocks the call. */
  withheld?: ReadonlyArray<{ key: string; needle: string }>;
}

/** The run loop's door to the models: one step's call, recorded on that run's trace. */
export interface ModelGateway {
  step(call: ModelStepCall): Promise<InferenceOutput>;
}

/** The gateway an AgentDO hands its run loop. */
export function agentModelGateway(deps: { env: GatewayEnv; grants: () => GrantSource; trace: TraceSink }): ModelGateway {
  return {
    step: (call) =>
      infer(
        { env: deps.env, grants: deps.grants(), agent: call.agent, wake: call.wake, purpose: "run_step", ...(call.withheld?.length ? { withheld: call.withheld } : {}), trace: { runKey: call.runKey, sink: call.step === undefined ? deps.trace : atStep(deps.trace, call.step) } },
        { system: call.system, messages: call.messages, tools: call.tools, onDelta: call.onDelta },
      ),
  };
}

/** A sink that tags a step's attempts and usage with the step. */
function atStep(sink: TraceSink, step: number): TraceSink {
  const tagged: TraceSink = {
    attempt: (runKey, entry) => sink.attempt(runKey, { ...entry, step }),
    policy: (runKey, entry) => sink.policy(runKey, entry),
    usage: (runKey, entry) => sink.usage(runKey, { ...entry, step }),
  };
  if (sink.succeeded) {
    const succeeded = sink.succeeded.bind(sink);
    tagged.succeeded = (runKey, attempt, usage) => succeeded(runKey, { ...attempt, step }, { ...usage, step });
  }
  return tagged;
}
