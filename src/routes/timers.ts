import { createRouter } from "../http/app";

/** Per-agent timers: GET|POST /v1/agents/:id/timers, DELETE …/:tid, POST …/:tid/trigger. */
export const timerRoutes = createRouter();
