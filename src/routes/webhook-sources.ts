import { createRouter } from "../http/app";

/** GET|POST|DELETE /v1/webhook-sources: signed inbound webhook sources. */
export const webhookSourceRoutes = createRouter();
