import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../http/app";
import { CONSOLE_CSS, CONSOLE_JS, CONSOLE_VERSION } from "../../console/bundle.generated";
import { problems } from "../openapi-helpers";

/**
 * The operator console: GET /console (the page), /console/app.js and /console/app.css, built from
 * src/console/ by scripts/build-widget.mjs. Public like /demo: the page holds no data; it signs in with
 * an API key the person pastes, and reads everything through the public API.
 */
export const consoleRoutes = createRouter();

/**
 * Only this origin's script, stylesheet and API; no inline script or style, no framing, no forms posting
 * elsewhere. `connect-src 'self'` covers the API and its event streams.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy": CONSOLE_CSP,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};
/** The assets are named by their version in the page, so they may be cached for good. */
const ASSET_CACHE = "public, max-age=31536000, immutable";

const Version = z.object({
  v: z.string().max(64).optional().openapi({ description: "The build version the page links" }),
});

consoleRoutes.openapi(
  createRoute({
    method: "get",
    path: "/console",
    summary: "The operator console: a page that signs in with an API key and uses this API (Content-Security-Policy)",
    responses: {
      200: { content: { "text/html": { schema: z.string() } }, description: "The console's page" },
      400: problems[400],
    },
  }),
  () => new Response(PAGE, { headers: PAGE_HEADERS }) as never,
);

for (const [path, body, contentType, summary] of [
  ["/console/app.js", CONSOLE_JS, "application/javascript", "The operator console's script (built from src/console/)"],
  ["/console/app.css", CONSOLE_CSS, "text/css", "The operator console's stylesheet"],
] as const) {
  consoleRoutes.openapi(
    createRoute({
      method: "get",
      path,
      summary,
      request: { query: Version },
      responses: {
        200: { content: { [contentType]: { schema: z.string() } }, description: "The asset" },
        400: problems[400],
      },
    }),
    () => asset(body, `${contentType}; charset=utf-8`) as never,
  );
}

function asset(body: string, contentType: string): Response {
  return new Response(body, {
    headers: {
      "content-type": contentType,
      "cache-control": ASSET_CACHE,
      etag: `"${CONSOLE_VERSION}"`,
      "x-content-type-options": "nosniff",
    },
  });
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vigil console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/app.css?v=${CONSOLE_VERSION}">
<script defer src="/console/app.js?v=${CONSOLE_VERSION}"></script>
</head>
<body>
<div id="app"><noscript>The Vigil console needs JavaScript.</noscript></div>
</body>
</html>
`;
