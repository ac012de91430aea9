import { ApiError } from "../../http/api-error";
import { createRouter } from "../../http/app";

/**
 * OAuth discovery says "no OAuth here": the well-known metadata URLs an MCP client (or any OAuth client) probes —
 * RFC 9728 protected resource, RFC 8414 authorization server, OpenID configuration, at the origin and under /v1/mcp —
 * answer 404 without asking for a credential, and so do the default endpoints a client falls back to without them
 * (`/register`, `/authorize`, `/token`). Vigil takes API keys and widget tokens as bearer tokens only, so an
 * MCP client given a wrong key fails with the 401 of /v1/mcp instead of starting an authorization flow.
 */
export const wellKnownRoutes = createRouter();

const noOAuth = () => {
  throw new ApiError("not_found", "this server has no OAuth metadata: send an API key (vk_…) or a widget token as the bearer token");
};

wellKnownRoutes.all("/.well-known/*", noOAuth);
wellKnownRoutes.all("/v1/mcp/.well-known/*", noOAuth);
// The endpoints an OAuth client falls back to when discovery finds no metadata (MCP's default endpoints).
for (const path of ["/register", "/authorize", "/token"]) wellKnownRoutes.all(path, noOAuth);
