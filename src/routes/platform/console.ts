import { Hono } from "hono";
import { CONSOLE_CSS, CONSOLE_JS, CONSOLE_VERSION } from "../../console/bundle.generated";

/**
 * The operator console: GET /console (the page), /console/app.js and /console/app.css, built from
 * src/console/ by scripts/build-widget.mjs. Public like /demo: the page holds no data; it signs in with
 * an API key the person pastes, and reads everything through the public API. Not part of the OpenAPI
 * document (it is a page, not an operation).
 */
export const consoleRoutes = new Hono();

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

consoleRoutes.get("/console", () => new Response(PAGE, { headers: PAGE_HEADERS }));
consoleRoutes.get("/console/", () => new Response(PAGE, { headers: PAGE_HEADERS }));
consoleRoutes.get("/console/app.js", () => asset(CONSOLE_JS, "application/javascript; charset=utf-8"));
consoleRoutes.get("/console/app.css", () => asset(CONSOLE_CSS, "text/css; charset=utf-8"));

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
