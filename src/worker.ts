import { buildApp } from "./http/routes";
import type { Env } from "./env";
import { configureLogging } from "./log";
import { consumeDeadWakes, consumeWakes } from "./queues/wake-consumer";
import { consumeOutbound, consumeOutboundDeadLetters } from "./queues/outbound-consumer";

export { AgentDO } from "./objects/agent/agent-do";
export { TenantDO } from "./objects/tenant/tenant-do";
export { ToolSagaWorkflow } from "./workflows/tool-saga";

const app = buildApp();

export default {
  fetch: (request, env, ctx) => {
    configureLogging(env.VIGIL_LOG_LEVEL);
    return app.fetch(request, env, ctx);
  },
  async queue(batch, env, _ctx) {
    configureLogging(env.VIGIL_LOG_LEVEL);
    if (batch.queue === "vigil-wake-dlq") await consumeDeadWakes(batch, env);
    else if (batch.queue.startsWith("vigil-wake")) await consumeWakes(batch, env);
    else if (batch.queue === "vigil-outbound-dlq") await consumeOutboundDeadLetters(batch, env);
    else if (batch.queue.startsWith("vigil-outbound")) await consumeOutbound(batch, env);
  },
} satisfies ExportedHandler<Env>;
