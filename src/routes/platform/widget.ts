import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../http/app";
import { WIDGET_JS, WIDGET_VERSION } from "../../widget/bundle.generated";
import { problems } from "../openapi-helpers";

/** GET /widget.js (the `<vigil-chat>` Web Component, built from src/widget/) and GET /demo (a page using it). Public: the widget authenticates its API calls with a widget JWT. */
export const widgetRoutes = createRouter();

const ETAG = `"${WIDGET_VERSION}"`;
/** The bare URL is revalidated daily (ETag → 304); `?v=<version>` names one build, so it may be cached for good. */
const CACHE_BARE = "public, max-age=86400, stale-while-revalidate=604800";
const CACHE_VERSIONED = "public, max-age=31536000, immutable";

widgetRoutes.openapi(
  createRoute({
    method: "get",
    path: "/widget.js",
    summary: "The chat widget: a dependency-free Web Component <vigil-chat agent token endpoint> (ETag; ?v=<version> is immutable)",
    request: { query: z.object({ v: z.string().max(64).optional().openapi({ description: "The build version (as /demo links it); any other value is served like the bare URL" }) }) },
    responses: {
      200: { content: { "application/javascript": { schema: z.string() } }, description: "The script" },
      304: { description: "Not modified (If-None-Match matched the ETag)" },
      400: problems[400],
    },
  }),
  (c) => {
    const cacheControl = c.req.valid("query").v === WIDGET_VERSION ? CACHE_VERSIONED : CACHE_BARE;
    const headers = { etag: ETAG, "cache-control": cacheControl, "access-control-allow-origin": "*", "x-content-type-options": "nosniff" };
    if (matchesEtag(c.req.header("if-none-match"))) return new Response(null, { status: 304, headers }) as never;
    return new Response(WIDGET_JS, { status: 200, headers: { ...headers, "content-type": "application/javascript; charset=utf-8" } }) as never;
  },
);

widgetRoutes.openapi(
  createRoute({
    method: "get",
    path: "/demo",
    summary: "A page showing the chat widget against this server; pass agent and token in the fragment: /demo#agent=<id>&token=<widget JWT>",
    request: { query: z.object({ agent: z.string().max(100).optional(), token: z.string().max(4096).optional() }) },
    responses: { 200: { content: { "text/html": { schema: z.string() } }, description: "A self-contained HTML page" }, 400: problems[400] },
  }),
  () =>
    new Response(DEMO_HTML, {
      status: 200,
      // no-referrer: a token given in the query never leaks onwards.
      headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" },
    }) as never,
);

function matchesEtag(header: string | undefined): boolean {
  if (!header) return false;
  return header.trim() === "*" || header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === ETAG);
}

const DEMO_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vigil chat widget demo</title>
<link rel="icon" href="data:,">
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 760px; padding: 1.5rem; color: #1b1f24; }
  h1 { font-size: 1.4rem; margin-bottom: .25rem; } .muted { color: #5b6470; } code { font: 13px ui-monospace, monospace; }
  form { display: grid; gap: .5rem; margin: 1rem 0; } label { display: grid; gap: .2rem; font-weight: 600; }
  input { font: inherit; padding: .35rem .5rem; } button { justify-self: start; font: inherit; padding: .35rem .9rem; }
  vigil-chat { --vigil-height: 520px; margin-top: 1rem; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<h1>Vigil chat widget</h1>
<p class="muted">The <code>&lt;vigil-chat&gt;</code> Web Component from <a href="/widget.js">/widget.js</a>, talking to this server with a widget token.
<code>npm start</code> prints a ready link; otherwise mint a token with <code>POST /v1/tokens</code> and fill in the form.</p>
<form id="setup" hidden>
  <label>Agent id <input name="agent" required autocomplete="off" placeholder="ag_…"></label>
  <label>Widget token (JWT from POST /v1/tokens) <input name="token" required autocomplete="off" placeholder="eyJ…"></label>
  <button type="submit">Open the chat</button>
</form>
<div id="slot"></div>
<script src="/widget.js?v=${WIDGET_VERSION}"></script>
<script>
(function () {
  // The fragment never reaches a server or a log; a query string is moved into it.
  var params = new URLSearchParams(location.hash.slice(1));
  var query = new URLSearchParams(location.search);
  if (!params.get("token") && query.get("token")) {
    params = query;
    history.replaceState(null, "", location.pathname + "#" + query.toString());
  }
  var agent = params.get("agent"), token = params.get("token");
  if (!agent || !token) {
    var form = document.getElementById("setup");
    form.hidden = false;
    if (agent) form.agent.value = agent;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      location.hash = new URLSearchParams({ agent: form.agent.value.trim(), token: form.token.value.trim() }).toString();
      location.reload();
    });
    return;
  }
  var chat = document.createElement("vigil-chat");
  chat.setAttribute("agent", agent);
  chat.setAttribute("token", token);
  chat.setAttribute("endpoint", location.origin);
  chat.setAttribute("heading", params.get("heading") || "Chat with your agent");
  chat.addEventListener("vigil-chat-error", function (event) { console.warn("vigil-chat:", event.detail.code, event.detail.message); });
  document.getElementById("slot").append(chat);
})();
</script>
</body>
</html>
`;
