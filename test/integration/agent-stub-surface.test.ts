import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { agentStub, type AgentRpc } from "../../src/objects/shared/stubs";

// Compile-time checks (npm test runs tsc over this file): an unused @ts-expect-error fails the typecheck,
// so each line below breaks the build the day the SDK's surface leaks into the stub type again.
function sdkSurfaceIsHidden(stub: AgentRpc): void {
  // @ts-expect-error the SDK scheduler is not callable through the stub
  void stub.schedule;
  // @ts-expect-error nor its state API
  void stub.setState;
  // @ts-expect-error nor its MCP client manager
  void stub.addMcpServer;
  // @ts-expect-error nor the schedule callbacks the SDK calls by name
  void stub.onTimerAlarm;
}

describe("the agent stub type", () => {
  it("keeps our RPC methods and hides the Agents SDK's public surface", () => {
    const stub = agentStub(env, "t-surface", "ag-surface");
    expect(typeof stub.getAgent).toBe("function");
    expect(typeof sdkSurfaceIsHidden).toBe("function");
  });
});
