import { createRouter } from "../http/app";

/** POST /v1/agents/:id/trigger: provision, rotate or revoke the agent's external trigger. */
export const triggerRoutes = createRouter();
