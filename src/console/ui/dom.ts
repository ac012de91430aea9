/**
 * The console's only way to build DOM: strings become Text nodes and attributes are set one by one,
 * so agent, visitor and tool text can never be parsed as HTML (no innerHTML anywhere in src/console/).
 */
export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, ...children);
  return node;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(
      typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child,
    );
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/** A `<button type="button">` that runs `action`; while a returned promise runs the button is disabled. */
export function button(label: string, action: () => unknown, attrs: Attrs = {}): HTMLButtonElement {
  const node = h("button", { type: "button", ...attrs }, label);
  node.addEventListener("click", () => {
    const result = action();
    if (result instanceof Promise) {
      node.disabled = true;
      void result.finally(() => {
        node.disabled = false;
      });
    }
  });
  return node;
}

/** A labelled form control: `<label>Text <input …></label>`, so tests and screen readers find it by its label. */
export function field(label: string, control: HTMLElement): HTMLLabelElement {
  return h("label", { class: "field" }, h("span", {}, label), control);
}

/** A `<select>`; `value` picks the option, else the first one is selected. */
export function select(
  name: string,
  options: Array<[value: string, label: string]>,
  value?: string,
): HTMLSelectElement {
  const node = h("select", { name });
  for (const [optionValue, optionLabel] of options) node.append(h("option", { value: optionValue }, optionLabel));
  if (value !== undefined && options.some(([optionValue]) => optionValue === value)) node.value = value;
  return node;
}

/** A table from a header row and body rows; an empty body shows `empty` across the columns. */
export function table(caption: string, headers: string[], rows: Child[][], empty: string): HTMLTableElement {
  const body = h("tbody");
  for (const row of rows)
    body.append(h("tr", {}, ...row.map((cell, i) => h("td", { "data-label": headers[i] ?? "" }, cell))));
  if (rows.length === 0) body.append(h("tr", {}, h("td", { colspan: headers.length, class: "empty" }, empty)));
  return h(
    "table",
    {},
    h("caption", { class: "sr-only" }, caption),
    h("thead", {}, h("tr", {}, ...headers.map((header) => h("th", { scope: "col" }, header)))),
    body,
  );
}

/** `<dl>` of label → value pairs; values that are records or arrays are shown as compact JSON text. */
export function facts(pairs: Array<[string, Child]>): HTMLDListElement {
  const list = h("dl", { class: "facts" });
  for (const [label, value] of pairs) list.append(h("dt", {}, label), h("dd", {}, value ?? "—"));
  return list;
}
