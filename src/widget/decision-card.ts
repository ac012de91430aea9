/**
 * A decision as a card in the conversation: its question, the tool's arguments as labelled fields, the
 * buttons (and free text where the question allows it), and once answered what was decided —
 * "Approved" or "Rejected" for a tool approval, "Answered: …" for a question — however the widget learned it.
 */
import type { DecisionAction, DecisionView } from "./decision-view";

export type Resolve = (view: DecisionView, action: DecisionAction | null, answerText?: string) => void;

export function decisionCard(view: DecisionView, titleId: string, resolve: Resolve): HTMLElement {
  const node = el("div", {
    class: "decision",
    "data-type": "decision",
    "data-status": view.status,
    "data-decision-id": view.id,
    role: "group",
    "aria-labelledby": titleId,
  });
  const title = el("p", { id: titleId });
  title.textContent = view.title;
  node.append(title);
  if (view.detail) node.append(text("p", "detail", view.detail));
  if (view.fields.length) {
    const fields = el("dl", { class: "detail fields" });
    for (const field of view.fields) fields.append(text("dt", "", field.label), text("dd", "", field.value));
    node.append(fields);
  }
  const pending = view.status === "pending";
  const actions = el("div", { class: "actions" });
  for (const action of view.actions) {
    const button = el("button", { type: "button", class: action.recommended ? "primary" : "" });
    button.textContent = action.label;
    button.disabled = !pending;
    button.addEventListener("click", () => resolve(view, action));
    actions.append(button);
  }
  node.append(actions);
  if (view.allowFreeText && pending) node.append(freeText(view, titleId, resolve));
  if (!pending) node.append(text("p", "answer", answerLine(view)));
  return node;
}

/** What the card says once it is no longer pending. */
export function answerLine(view: Pick<DecisionView, "status" | "answer">): string {
  if (view.status !== "resolved") return "No longer waiting for an answer";
  if (view.answer === "Approved" || view.answer === "Rejected") return view.answer;
  if (!view.answer) return "Answered";
  return `Answered: ${view.answer}`;
}

function freeText(view: DecisionView, titleId: string, resolve: Resolve): HTMLFormElement {
  const form = el("form", {});
  const inputId = `${titleId}-text`;
  const label = el("label", { class: "sr-only", for: inputId });
  label.textContent = "Your own answer";
  const input = el("input", { type: "text", id: inputId, placeholder: "Or type an answer…" });
  const submit = el("button", { type: "submit" });
  submit.textContent = "Answer";
  form.append(label, input, submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const answer = input.value.trim();
    if (answer) resolve(view, null, answer);
  });
  return form;
}

function text<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  content: string,
): HTMLElementTagNameMap[K] {
  const node = el(tag, className ? { class: className } : {});
  node.textContent = content;
  return node;
}

/** An element with attributes; an empty value leaves the attribute out (except `hidden`). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string>,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes))
    if (value !== "" || name === "hidden") node.setAttribute(name, value);
  return node;
}
