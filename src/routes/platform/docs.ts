import { createRoute, z } from "@hono/zod-openapi";
import { createRouter } from "../../http/app";

/** GET /docs: a self-contained API reference page (no external scripts, styles or fonts). */
export const docsRoutes = createRouter();

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vigil API</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1000px; padding: 1rem 1.5rem; color: #1b1f24; }
  h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; border-bottom: 1px solid #ddd; padding-bottom: .25rem; margin-top: 2rem; }
  details { border: 1px solid #e3e3e3; border-radius: 6px; margin: .4rem 0; padding: .35rem .6rem; }
  summary { cursor: pointer; } code { font: 13px ui-monospace, monospace; }
  .m { display: inline-block; min-width: 4.2rem; font: bold 12px ui-monospace, monospace; text-transform: uppercase; }
  .get { color: #0a6; } .post { color: #06c; } .put, .patch { color: #a60; } .delete { color: #c22; }
  table { border-collapse: collapse; margin: .3rem 0; } td, th { border: 1px solid #e3e3e3; padding: .15rem .5rem; text-align: left; vertical-align: top; }
  .muted { color: #666; }
</style>
</head>
<body>
<h1>Vigil API</h1>
<p class="muted">Rendered from <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
<input id="filter" type="search" placeholder="Filter by path or summary" style="width:100%;padding:.35rem">
<div id="out">Loading…</div>
<script>
(function () {
  var out = document.getElementById("out");
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    for (var key in attrs || {}) node.setAttribute(key, attrs[key]);
    (children || []).forEach(function (child) { node.append(child); });
    return node;
  }
  function schemaName(schema) {
    if (!schema) return "—";
    if (schema.$ref) return schema.$ref.split("/").pop();
    if (schema.type === "array") return schemaName(schema.items) + "[]";
    if (schema.properties) return "{ " + Object.keys(schema.properties).join(", ") + " }";
    return schema.type || "object";
  }
  function contentRows(content) {
    return Object.keys(content || {}).map(function (type) { return type + ": " + schemaName(content[type].schema); }).join("; ") || "—";
  }
  function render(doc, filter) {
    var groups = {};
    Object.keys(doc.paths || {}).sort().forEach(function (path) {
      Object.keys(doc.paths[path]).forEach(function (method) {
        var op = doc.paths[path][method];
        var text = (method + " " + path + " " + (op.summary || "")).toLowerCase();
        if (filter && text.indexOf(filter) < 0) return;
        var tag = (op.tags && op.tags[0]) || path.split("/").filter(Boolean).slice(0, 2).join("/") || "/";
        (groups[tag] = groups[tag] || []).push({ path: path, method: method, op: op });
      });
    });
    out.textContent = "";
    Object.keys(groups).sort().forEach(function (tag) {
      out.append(el("h2", {}, [tag]));
      groups[tag].forEach(function (entry) {
        var op = entry.op;
        var details = el("details", {}, [el("summary", {}, [el("span", { class: "m " + entry.method }, [entry.method]), el("code", {}, [entry.path]), " — " + (op.summary || "")])]);
        if (op.description) details.append(el("p", {}, [op.description]));
        var params = op.parameters || [];
        if (params.length) {
          var table = el("table", {}, [el("tr", {}, [el("th", {}, ["parameter"]), el("th", {}, ["in"]), el("th", {}, ["type"]), el("th", {}, ["required"])])]);
          params.forEach(function (p) { table.append(el("tr", {}, [el("td", {}, [el("code", {}, [p.name])]), el("td", {}, [p.in]), el("td", {}, [schemaName(p.schema)]), el("td", {}, [p.required ? "yes" : "no"])])); });
          details.append(table);
        }
        if (op.requestBody) details.append(el("p", {}, ["Request: ", el("code", {}, [contentRows(op.requestBody.content)])]));
        var responses = el("table", {}, [el("tr", {}, [el("th", {}, ["status"]), el("th", {}, ["description"]), el("th", {}, ["body"])])]);
        Object.keys(op.responses || {}).forEach(function (status) {
          var r = op.responses[status];
          responses.append(el("tr", {}, [el("td", {}, [status]), el("td", {}, [r.description || ""]), el("td", {}, [el("code", {}, [contentRows(r.content)])])]));
        });
        details.append(responses);
        out.append(details);
      });
    });
    if (!out.childNodes.length) out.textContent = "No operations match.";
  }
  fetch("/v1/openapi.json").then(function (res) { return res.json(); }).then(function (doc) {
    render(doc, "");
    document.getElementById("filter").addEventListener("input", function (event) { render(doc, event.target.value.toLowerCase()); });
  }).catch(function (error) { out.textContent = "Could not load /v1/openapi.json: " + error; });
})();
</script>
</body>
</html>
`;

docsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/docs",
    summary: "Human-readable API reference rendered from /v1/openapi.json",
    responses: { 200: { content: { "text/html": { schema: z.string() } }, description: "A self-contained HTML page" } },
  }),
  (c) => new Response(DOCS_HTML, { status: 200, headers: { "content-type": "text/html; charset=utf-8" } }) as never,
);
