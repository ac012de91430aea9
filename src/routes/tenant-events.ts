import { createRouter } from "../http/app";

/** POST /v1/events: a tenant's own systems post change notifications. */
export const tenantEventRoutes = createRouter();
