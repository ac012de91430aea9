import { createRouter } from "../http/app";

/** Unauthenticated ingress verified by secret or signature: POST /v1/hooks/t/:triggerId, POST /v1/hooks/s/:sourceId. */
export const hookRoutes = createRouter();
