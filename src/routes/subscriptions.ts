import { createRouter } from "../http/app";

/** Per-agent subscriptions: GET|POST /v1/agents/:id/subscriptions, DELETE …/:sid. */
export const subscriptionRoutes = createRouter();
