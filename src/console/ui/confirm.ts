/** A modal confirmation (`<dialog>`, keyboard-usable: Escape cancels, focus starts on Cancel). */
import { h } from "./dom";

export function confirmAction(question: string, detail: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
    const ok = h("button", { type: "button", class: "danger" }, confirmLabel);
    const dialog = h(
      "dialog",
      { "aria-labelledby": "confirm-title" },
      h("h2", { id: "confirm-title" }, question),
      h("p", {}, detail),
      h("div", { class: "actions" }, cancel, ok),
    );
    const finish = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    cancel.addEventListener("click", () => finish(false));
    ok.addEventListener("click", () => finish(true));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      finish(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
