/**
 * The console's shell: sign-in with an API key, then the navigation (Agents, Decisions, Events, Usage)
 * and one view at a time, chosen by the URL fragment. Everything it shows comes from the public API
 * through the typed client, so a tenant could script all of it.
 */
import { VigilClient } from "../client";
import type { View, ViewContext } from "./context";
import { button, field, h, replace } from "./ui/dom";
import { agentView } from "./views/agent-view";
import { agentsView } from "./views/agents-view";
import { decisionsView } from "./views/decisions-view";
import { eventsView } from "./views/events-view";
import { href, parseRoute, type Route } from "./router";
import { runView } from "./views/run-view";
import { forgetCredential, storeCredential, storedCredential } from "./session";
import { failure, problemText } from "./ui/status";
import { usageView } from "./views/usage-view";

const NAV: Array<[label: string, page: "agents" | "decisions" | "events" | "usage"]> = [
  ["Agents", "agents"],
  ["Decisions", "decisions"],
  ["Events", "events"],
  ["Usage", "usage"],
];

export function startConsole(root: HTMLElement): void {
  const credential = storedCredential();
  if (credential) signedIn(root, credential);
  else signIn(root);
}

function client(token: string): VigilClient {
  return new VigilClient({ baseUrl: location.origin, token });
}

function signIn(root: HTMLElement, message?: string): void {
  const input = h("input", {
    type: "password",
    name: "apiKey",
    autocomplete: "off",
    required: true,
    spellcheck: "false",
  });
  const error = h("p", { class: "notice error", role: "alert", hidden: !message }, message ?? "");
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    { class: "signin", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Vigil console"),
    h(
      "p",
      { class: "muted" },
      "Sign in with a tenant API key (vk_…). It stays in this tab only and is forgotten when the tab closes.",
    ),
    field("API key", input),
    submit,
    error,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    submit.disabled = true;
    client(key)
      .listAgents({ limit: 1 })
      .then(() => {
        storeCredential(key);
        signedIn(root, key);
      })
      .catch((reason: unknown) => {
        error.hidden = false;
        error.textContent = problemText(reason);
        submit.disabled = false;
        input.focus();
      });
  });
  replace(root, h("main", { class: "signin-page" }, form));
  input.focus();
}

function signedIn(root: HTMLElement, credential: string): void {
  const api = client(credential);
  const links = NAV.map(([text, page]) => h("a", { href: href({ page } as Route), "data-page": page }, text));
  const signOut = button("Sign out", () => {
    current?.abort();
    forgetCredential();
    window.removeEventListener("hashchange", show);
    history.replaceState(null, "", location.pathname);
    signIn(root);
  });
  const main = h("main", { id: "main", tabindex: "-1" });
  const header = h(
    "header",
    { class: "top" },
    h("a", { class: "brand", href: "#/agents" }, "Vigil"),
    h("nav", { "aria-label": "Console" }, ...links),
    signOut,
  );
  replace(root, h("a", { class: "skip", href: "#main" }, "Skip to content"), header, main);

  let current: AbortController | null = null;
  function show(): void {
    const route = parseRoute(location.hash);
    current?.abort();
    const controller = new AbortController();
    current = controller;
    const section = route.page === "agent" || route.page === "run" ? "agents" : route.page;
    for (const link of links) {
      if (link.dataset.page === section) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    const ctx: ViewContext = { api, signal: controller.signal, navigate: (next) => void (location.hash = href(next)) };
    replace(main);
    void Promise.resolve(viewOf(route)(ctx, main)).catch((error: unknown) => {
      if (!controller.signal.aborted) replace(main, failure(error, show));
    });
  }
  window.addEventListener("hashchange", show);
  show();
}

function viewOf(route: Route): View {
  switch (route.page) {
    case "agent":
      return (ctx, root) => agentView(ctx, root, route.agentId, route.tab);
    case "run":
      return (ctx, root) => runView(ctx, root, route.agentId, route.runKey);
    case "decisions":
      return decisionsView;
    case "events":
      return eventsView;
    case "usage":
      return usageView;
    default:
      return agentsView;
  }
}
