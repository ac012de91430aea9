/** Loading, empty and error states that say what is happening and what to do. */
import { VigilApiError } from "../../client";
import { h } from "./dom";

export function loading(what: string): HTMLElement {
  return h("p", { class: "state loading", role: "status" }, `Loading ${what}…`);
}

export function empty(text: string): HTMLElement {
  return h("p", { class: "state empty" }, text);
}

/** What went wrong, in words, with the next step for the person. */
export function problemText(error: unknown): string {
  if (error instanceof VigilApiError) {
    if (error.status === 401) return "The API key was not accepted (401). Sign out and sign in with a valid key.";
    if (error.status === 403) return `This key may not do that (${error.code}): ${error.detail}`;
    if (error.status === 404)
      return `Not found (${error.code}): it may have been destroyed, or belong to another tenant.`;
    if (error.status === 429) {
      const wait = error.retryAfterSeconds ? ` in ${error.retryAfterSeconds} s` : " shortly";
      return `Too many requests: try again${wait}.`;
    }
    return `${error.detail || error.code} (${error.code}, HTTP ${error.status})`;
  }
  if (error instanceof TypeError) return "The server could not be reached. Check that it is running, then reload.";
  return error instanceof Error ? error.message : String(error);
}

export function failure(error: unknown, retry?: () => void): HTMLElement {
  const box = h("div", { class: "state error", role: "alert" }, h("p", {}, problemText(error)));
  if (retry) {
    const again = h("button", { type: "button" }, "Try again");
    again.addEventListener("click", retry);
    box.append(again);
  }
  return box;
}

/** A small line that reports what an action did (role=status, announced politely). */
export function notice(text: string, kind: "ok" | "error" = "ok"): HTMLElement {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}
